// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package liveness

import (
	"context"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestLeaseStatus(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	lease := func(renewAgo time.Duration, dur int32) *coordv1.Lease {
		rt := metav1.NewMicroTime(now.Add(-renewAgo))
		h := "cp-1_abc"
		return &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kube-controller-manager", Namespace: Namespace},
			Spec: coordv1.LeaseSpec{HolderIdentity: &h, RenewTime: &rt, LeaseDurationSeconds: &dur}}
	}
	for _, tc := range []struct {
		name      string
		lease     *coordv1.Lease
		found     bool
		wantStale bool
	}{
		{"fresh", lease(2*time.Second, 15), true, false},
		{"within grace", lease(19*time.Second, 15), true, false},
		{"stale", lease(21*time.Second, 15), true, true},
		{"missing", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewClientset()
			if tc.lease != nil {
				cs = fake.NewClientset(tc.lease)
			}
			s, err := LeaseStatus(context.Background(), cs, "kube-controller-manager", now)
			if err != nil {
				t.Fatal(err)
			}
			if s.Found != tc.found || s.Stale != tc.wantStale {
				t.Fatalf("got %+v, want found=%v stale=%v", s, tc.found, tc.wantStale)
			}
		})
	}
}
