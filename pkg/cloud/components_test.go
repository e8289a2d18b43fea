// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestExpandArgs(t *testing.T) {
	t.Parallel()
	env := map[string]string{"CLOUD_CONFIG": "/etc/config/cloud.conf", "EMPTY": ""}
	for _, tc := range []struct{ in, want string }{
		{"--cloud-config=$(CLOUD_CONFIG)", "--cloud-config=/etc/config/cloud.conf"},
		{"$(CLOUD_CONFIG)$(CLOUD_CONFIG)", "/etc/config/cloud.conf/etc/config/cloud.conf"},
		{"--x=$(UNSET)", "--x=$(UNSET)"},
		{"--x=$$(CLOUD_CONFIG)", "--x=$(CLOUD_CONFIG)"},
		{"--x=$(EMPTY)y", "--x=y"},
		{"--x=$(unclosed", "--x=$(unclosed"},
		{"cost $5 $", "cost $5 $"},
		{"plain", "plain"},
	} {
		if got := expand(tc.in, env); got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	ctr := corev1.Container{Args: []string{"--cloud-config=$(CLOUD_CONFIG)", "--cloud-provider=openstack"},
		Env: []corev1.EnvVar{{Name: "CLOUD_CONFIG", Value: "/etc/config/cloud.conf"}}}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{ctr}}}
	pod.Name = "openstack-cloud-controller-manager-x"
	cs := componentsOf(pod)
	if len(cs) != 1 || cs[0].CloudConfig != "/etc/config/cloud.conf" {
		t.Fatalf("componentsOf = %+v, want --cloud-config /etc/config/cloud.conf", cs)
	}
}

// FuzzExpand: any argument expands without panicking; one without $ is unchanged, and expanding
// with no variables only collapses $$.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"--cloud-config=$(CLOUD_CONFIG)", "$$", "$(", "$()", "a$"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := expand(s, map[string]string{"CLOUD_CONFIG": "/c", "": "empty"})
		if !strings.Contains(s, "$") && got != s {
			t.Fatalf("expand(%q) = %q, want it unchanged", s, got)
		}
		if want := strings.ReplaceAll(s, "$$", "$"); !strings.Contains(s, "$(") && got != want && !strings.Contains(s, "$$$") {
			t.Fatalf("expand(%q) = %q, want %q", s, got, want)
		}
	})
}

func TestCrashLooping(t *testing.T) {
	t.Parallel()
	failed := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 255, Reason: "Error"}}
	ok := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	waiting := func(r string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: r}}
	}
	for _, tc := range []struct {
		name string
		st   corev1.ContainerStatus
		want bool
	}{
		{"back-off", corev1.ContainerStatus{State: waiting("CrashLoopBackOff"), RestartCount: 3}, true},
		{"exited again", corev1.ContainerStatus{State: failed, LastTerminationState: failed, RestartCount: 2}, true},
		{"restarting after a failure", corev1.ContainerStatus{State: waiting("ContainerCreating"), LastTerminationState: failed, RestartCount: 1}, true},
		{"running after a failure", corev1.ContainerStatus{State: running, LastTerminationState: failed, RestartCount: 1}, false},
		{"first failure", corev1.ContainerStatus{State: failed}, false},
		{"clean exits", corev1.ContainerStatus{State: ok, LastTerminationState: ok, RestartCount: 2}, false},
		{"starting", corev1.ContainerStatus{State: waiting("ContainerCreating")}, false},
	} {
		if got := crashLooping(tc.st); got != tc.want {
			t.Errorf("%s: crashLooping = %v, want %v", tc.name, got, tc.want)
		}
	}
}
