// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"slices"
	"testing"
	"time"
)

// A lease that changed hands in the last 10 minutes is controller-restarted (info); a stale one
// is controllers-not-running, whatever its transitions.
func TestCheckControllersTakeover(t *testing.T) {
	fresh := func(transitions int, acquired time.Duration) Lease {
		return Lease{Name: "kube-controller-manager", Found: true, Holder: "cp-1_x", Duration: 15 * time.Second,
			RenewTime: now.Add(-2 * time.Second), Age: 2 * time.Second, Transitions: transitions, Acquired: now.Add(-acquired)}
	}
	stale := fresh(3, time.Hour)
	stale.Stale, stale.RenewTime = true, now.Add(-time.Hour)
	tests := []struct {
		name  string
		lease Lease
		want  []string
	}{
		{name: "first holder", lease: fresh(0, time.Minute), want: nil},
		{name: "taken over 2m ago", lease: fresh(1, 2*time.Minute), want: []string{idTakeover}},
		{name: "taken over an hour ago", lease: fresh(4, time.Hour), want: nil},
		{name: "stale", lease: stale, want: []string{idControllers}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snapshot()
			s.Leases = []Lease{tt.lease}
			var got []string
			for _, f := range checkControllers(s) {
				got = append(got, f.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings %v, want %v", got, tt.want)
			}
		})
	}
}
