// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package liveness

import (
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// ToleratesUninitialized reports whether tolerations let a Pod onto a node that still carries
// TaintUninitialized (effect NoSchedule).
func ToleratesUninitialized(tolerations []corev1.Toleration) bool {
	taint := &corev1.Taint{Key: TaintUninitialized, Value: "true", Effect: corev1.TaintEffectNoSchedule}
	for i := range tolerations {
		if tolerations[i].ToleratesTaint(logr.Discard(), taint, false) {
			return true
		}
	}
	return false
}

// BlockedByUninitialized reports whether a Pod the scheduler could not place waits for nodes to
// be initialized: its Unschedulable message names the taint (older schedulers: "had taint
// {node.cloudprovider.kubernetes.io/uninitialized: true}, that the pod didn't tolerate"), or says
// only "untolerated taint(s)" as current ones do (v1.36: "1 node(s) had untolerated taint(s)")
// while the Pod does not tolerate the taint. The caller knows that some node carries it.
func BlockedByUninitialized(unschedulableMsg string, tolerates bool) bool {
	if tolerates || unschedulableMsg == "" {
		return false
	}
	return strings.Contains(unschedulableMsg, TaintUninitialized) || strings.Contains(unschedulableMsg, "untolerated taint")
}
