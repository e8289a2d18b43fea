// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

// pw is a non-ASCII password of marker runes (two bytes each): any of its runes in an output is
// a leak.
const pw = "ЖЩЮЯЖЩЮЯЖЩ"

// around puts pw in a message so that a cut at n bytes falls inside it, after k of its bytes.
func around(n, k int) string {
	pad := "vcenter login failed for admin with "
	return pad + strings.Repeat("x", n-k-len(pad)) + pw + " (ServerFaultCode: Cannot complete login)"
}

// TestTruncateRedactsFirst: a message cut inside a password loses the whole password, never
// keeps its first characters (issue 37), and a cut never splits a rune.
func TestTruncateRedactsFirst(t *testing.T) {
	t.Parallel()
	for _, n := range []int{200, 300} {
		for k := 1; k < len(pw); k++ {
			got := truncate(around(n, k), n, pw)
			if leak := redacttest.PasswordLeak(got); leak != "" {
				t.Errorf("cut at %d, %d bytes into the password: %s in %q", n, k, leak, got)
			}
		}
	}
	if got := truncate("ab"+pw, 3); got != "ab..." {
		t.Errorf("a cut inside a rune: %q", got)
	}
}

// TestJudgeCutsAfterRedaction: the last exit message of a crash-looping controller and its last
// cloud failure line, cut at 200 and 300 bytes inside a known password, keep none of it in the
// report (the inventory's components and the symptom findings).
func TestJudgeCutsAfterRedaction(t *testing.T) {
	t.Parallel()
	for k := 1; k < len(pw); k += 3 {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "vsphere-cloud-controller-manager-x"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vsphere-cloud-controller-manager", Image: "cpi:1"}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "vsphere-cloud-controller-manager", RestartCount: 4,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: around(200, k)}}}}}}
		comps := componentsOf(pod)
		if len(comps) != 1 || !comps[0].CrashLooping {
			t.Fatalf("componentsOf: %+v", comps)
		}
		obs := &Observation{Inventory: Inventory{Items: []Item{{Credential: Credential{Provider: VSphere, Server: "vc", Username: "admin", password: pw}}},
			Components: comps}, Controllers: []ControllerLog{{Component: comps[0], Lines: []string{around(300, k)}}}}
		out, err := json.Marshal(Judge(obs, catalogue.Warning))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "ServerFaultCode") && !strings.Contains(string(out), "vcenter login failed") {
			t.Fatalf("no message reached the report: the test proves nothing\n%s", out)
		}
		if leak := redacttest.PasswordLeak(string(out)); leak != "" {
			t.Errorf("%d bytes into the password: %s in\n%s", k, leak, out)
		}
	}
}
