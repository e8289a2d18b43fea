// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package infra

import (
	"slices"
	"testing"
)

func TestPlan(t *testing.T) {
	up := MachineState{ControlPlane: true, ClusterReady: true, Bootstrap: true, HostUp: true, Bootstrapped: true, InLB: true}
	with := func(f func(*MachineState)) MachineState { s := up; f(&s); return s }
	tests := []struct {
		name string
		s    MachineState
		d    Deregistration
		want []Step
	}{
		{"cluster not ready", MachineState{}, OnDrain, []Step{WaitCluster}},
		{"no bootstrap data", MachineState{ClusterReady: true}, OnDrain, []Step{WaitBootstrap}},
		{"new host", MachineState{ClusterReady: true, Bootstrap: true}, OnDrain, []Step{CreateHost}},
		{"kubeadm still running: registered at once", with(func(s *MachineState) { s.Bootstrapped, s.InLB = false, false }), OnDrain, []Step{Register}},
		{"joined", with(func(s *MachineState) { s.InLB = false }), OnDrain, []Step{Register}},
		{"worker joined", with(func(s *MachineState) { s.ControlPlane, s.InLB = false, false }), OnDrain, nil},
		{"running", up, OnDrain, nil},
		{"draining, deregistered on drain", with(func(s *MachineState) { s.MachineDeleting = true }), OnDrain, []Step{Deregister}},
		{"draining, kept until the machine goes (CAPA < 2.4)", with(func(s *MachineState) { s.MachineDeleting = true }), OnMachineDelete, nil},
		{"deleted", with(func(s *MachineState) { s.MachineDeleting, s.Deleting = true, true }), OnMachineDelete, []Step{Deregister, DeleteHost, RemoveFinalizer}},
		{"deleted after drain deregistered it", with(func(s *MachineState) { s.Deleting, s.InLB = true, false }), OnDrain, []Step{DeleteHost, RemoveFinalizer}},
		{"deleted before its host existed", MachineState{Deleting: true}, OnDrain, []Step{RemoveFinalizer}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Plan(tt.s, tt.d); !slices.Equal(got, tt.want) {
				t.Errorf("Plan = %v, want %v", got, tt.want)
			}
		})
	}
}
