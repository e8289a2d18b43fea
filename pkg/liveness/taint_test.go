// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package liveness

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestBlockedByUninitialized(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg       string
		tolerates bool
		want      bool
	}{
		// v1.36.3's scheduler, as the lab's cloud-password-rotated run recorded it.
		{"0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.", false, true},
		{"0/3 nodes are available: 3 node(s) had taint {node.cloudprovider.kubernetes.io/uninitialized: true}, that the pod didn't tolerate.", false, true},
		{"0/1 nodes are available: 1 node(s) had untolerated taint(s).", true, false},
		{"0/1 nodes are available: 1 Insufficient cpu.", false, false},
		{"", false, false},
	} {
		if got := BlockedByUninitialized(tc.msg, tc.tolerates); got != tc.want {
			t.Errorf("BlockedByUninitialized(%.50q…, %v) = %v, want %v", tc.msg, tc.tolerates, got, tc.want)
		}
	}
	tols := []corev1.Toleration{{Key: TaintUninitialized, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	if !ToleratesUninitialized(tols) || !ToleratesUninitialized([]corev1.Toleration{{Operator: corev1.TolerationOpExists}}) || ToleratesUninitialized(nil) {
		t.Error("ToleratesUninitialized: wrong answer for the CPI's toleration, a tolerate-everything one or none")
	}
}
