// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/golden"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
	"github.com/credwatch/credwatch/pkg/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// corpus is the shared reference corpus of real current/planned pairs (never copied here).
const corpus = "../../../shared/reference/preflight-corpus"

func run(t *testing.T, dir, capi string) *preflight.Report {
	t.Helper()
	cur, err := input.Load(t.Context(), filepath.Join(dir, "current.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := input.Load(t.Context(), filepath.Join(dir, "planned.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := preflight.Run(preflight.Config{Current: cur, Planned: pl, CAPIVersion: capi})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ids(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	slices.Sort(out)
	return out
}

// TestCorpus: what each real pair should predict, judged from its sources (README.md there).
func TestCorpus(t *testing.T) {
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("preflight corpus not found at %s (it lives in the shared reference folder): %v", corpus, err)
	}
	cases := map[string][]string{
		// CAPI v1.8.1 (old etcd order) and CAPA v2.3.5's classic ELB SSL check; a version bump rolls all.
		"capa-v2.3.5-capi-v1.8.1-classic-elb-ssl": {"etcd-removed-before-drain", "lb-check-not-ready-aware", "rollout-planned"},
		// v0.18.0 seds /run/kubeadm/kubeadm.yaml only: joined machines keep the placeholder;
		// AWSCluster v1beta1 is CAPA v1.x, whose classic ELB does not check /readyz.
		"cluster-aws-0.18.0-k8s-patch-bump": {"issuer-join-differs", "issuer-placeholder", "lb-check-not-ready-aware", "rollout-planned"},
		// v0.20.2 seds the static-pod manifest after start on every machine: a window only.
		"cluster-aws-0.18.0-to-0.20.2": {"issuer-placeholder", "lb-check-not-ready-aware", "rollout-planned"},
		"kcp-benign-1.29-to-1.30":      {"no-change", "rollout-planned"},
		"kcp-sa-secret-regenerated":    {"rollout-planned", "sa-key-change"},
		// one master: no overlap of old and new members, so no issuer-switch finding.
		// Every kops change of the API server's flags rolls the control plane (kops rolling-update).
		"kops-irsa-enable-drops-old": {"issuer-change-drops-old", "rollout-planned"},
		// step 4 of the migration: the new primary was already accepted.
		"kops-sai-migration-keeps-old":         {"rollout-planned"},
		"kubeadm-v1beta3-to-v1beta4-deckhouse": {"no-change"},
		"static-pod-sa-key-rotation":           {"sa-key-change"},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, filepath.Join(corpus, name), "")
			if got := ids(r.Findings); !slices.Equal(got, want) {
				t.Errorf("findings %v, want %v", got, want)
			}
		})
	}
}

// TestCases: the hand-written pairs in testdata, one or more per ID and per input kind, with
// their table output as golden files.
func TestCases(t *testing.T) {
	cases := []struct {
		dir, capi string
		want      []string
	}{
		{"kcp-issuer-switch", "", []string{"issuer-change-drops-old", "issuer-switch-before-all-accept", "rollout-planned"}},
		{"kcp-placeholder", "v1.8.1", []string{"etcd-removed-before-drain", "issuer-change-drops-old", "issuer-placeholder", "lb-check-not-ready-aware", "rollout-planned"}},
		{"kcp-rollout-after", "v1.8.2", []string{"no-change", "rollout-planned"}},
		// Cluster API v1beta2 objects (CAPV-like): the machine template change rolls all three.
		{"kcp-infra-template-v1beta2", "", []string{"no-change", "rollout-planned"}},
		// The lab provider's LabCluster and clusterctl's inventory (no --capi-version).
		{"labcluster-tls", "", []string{"etcd-removed-before-drain", "lb-check-not-ready-aware", "rollout-planned"}},
		// The KubeadmConfigSpec brings its own key files (v1beta2): their keys, not <cluster>-sa's.
		{"kcp-spec-key-files", "", []string{"rollout-planned", "sa-key-change"}},
		// In-place updates configured (v1.14.2 inventory, gate on, one extension): two of three
		// machines may be updated in place.
		{"kcp-in-place", "", []string{"in-place-update-possible", "rollout-planned"}},
		{"static-audience", "", []string{"audience-change-drops-old", "legacy-token-secrets"}},
		{"static-key-legacy", "", []string{"legacy-token-secrets", "sa-key-change"}},
		{"kubeadm-join-differs", "", []string{"issuer-join-differs", "issuer-switch-before-all-accept"}},
		{"kops-switch", "", []string{"issuer-change-drops-old", "issuer-switch-before-all-accept", "rollout-planned"}},
		// An external signer turned on in one roll: key file kept, a new key only, the
		// cluster's issuer in the AuthenticationConfiguration.
		{"static-signer-on", "", []string{"authn-config-issuer-is-sa-issuer", "signer-switch-without-old-keys", "signer-with-key-files"}},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			r := run(t, filepath.Join("testdata", c.dir), c.capi)
			if got := ids(r.Findings); !slices.Equal(got, c.want) {
				t.Errorf("findings %v, want %v", got, c.want)
			}
			var b bytes.Buffer
			if err := report.Print(&b, report.Wide, r); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", c.dir+".txt"), b.Bytes(), *update)
		})
	}
}

// TestStepsByMaxSurge: maxSurge 0 removes first, 1 adds first; the oldest machine goes first.
func TestStepsByMaxSurge(t *testing.T) {
	r := run(t, filepath.Join("testdata", "kcp-issuer-switch"), "")
	var got []string
	for _, s := range r.Steps {
		got = append(got, s.Action+" "+s.Machine)
	}
	want := []string{"remove lab-cp-a", "add lab-cp-new-1", "remove lab-cp-b", "add lab-cp-new-2", "remove lab-cp-c", "add lab-cp-new-3"}
	if !slices.Equal(got, want) {
		t.Errorf("steps %q, want %q", got, want)
	}
	if rj := r.Steps[1].Rejects; !slices.Equal(rj, []string{"current rejects planned", "planned rejects pre-roll", "planned rejects current"}) {
		t.Errorf("step 2 rejects %q", rj)
	}
}

// TestBadInput: each is one error naming the file (or the cluster) and what is wrong.
func TestBadInput(t *testing.T) {
	for file, want := range map[string]string{
		"malformed.yaml": "testdata/bad/malformed.yaml: document 1: malformed YAML: ",
		"no-spec.yaml":   "testdata/bad/no-spec.yaml: document 1: KubeadmControlPlane lab-cp: no spec.kubeadmConfigSpec",
	} {
		_, err := input.Load(t.Context(), filepath.Join("testdata", "bad", file))
		if err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("%s: error %v, want it to start %q", file, err, want)
		}
	}
	cur, _ := input.Load(t.Context(), "testdata/kcp-issuer-switch/current.yaml")
	other, err := input.Load(t.Context(), "testdata/bad/other-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = preflight.Run(preflight.Config{Current: cur, Planned: other})
	if err == nil || err.Error() != `planned files are for cluster "other", current for "lab"` {
		t.Errorf("other cluster: %v", err)
	}
}

// TestTwoControlPlanes: two KubeadmControlPlanes on one side are refused, naming both, never
// one of them compared silently.
func TestTwoControlPlanes(t *testing.T) {
	cur, err := input.Load(t.Context(), "testdata/kcp-issuer-switch/current.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := input.Load(t.Context(), "testdata/kcp-issuer-switch/planned.yaml")
	if err != nil {
		t.Fatal(err)
	}
	two := *pl
	second := two.KCPs[0]
	second.Name = "lab-cp-2"
	two.KCPs = append(append([]input.KCP(nil), two.KCPs...), second)
	for _, tt := range []struct {
		name        string
		cur, pl     *input.Set
		want, want2 string
	}{
		{"planned", cur, &two, "planned: 2 KubeadmControlPlanes", "lab-cp-2"},
		{"current", &two, pl, "current: 2 KubeadmControlPlanes", "lab-cp-2"},
	} {
		_, err := preflight.Run(preflight.Config{Current: tt.cur, Planned: tt.pl})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.want2) {
			t.Errorf("%s: error %v, want %q naming %q", tt.name, err, tt.want, tt.want2)
		}
	}
}

// TestLBCheckByCAPIVersion: a check that ignores readiness is raised for the roll where the
// storage-less member stays in rotation: v1.8.1 (etcd removed before the drain) and up to v1.13
// (drains repeated through the balancer after the hook; the lab: 1m40s on v1.8.4 behind TLS);
// from v1.14.0 the machine leaves as it is deleted (under 500 ms on v1.14.2 behind TCP), and a
// note says why it is not raised.
func TestLBCheckByCAPIVersion(t *testing.T) {
	for _, tc := range []struct {
		capi   string
		raised bool
	}{{"v1.8.1", true}, {"v1.8.4", true}, {"v1.13.2", true}, {"v1.14.0", false}, {"v1.14.2", false}} {
		r := run(t, filepath.Join("testdata", "labcluster-tls"), tc.capi)
		if got := slices.Contains(ids(r.Findings), "lb-check-not-ready-aware"); got != tc.raised {
			t.Errorf("Cluster API %s: lb-check-not-ready-aware raised %v, want %v (%v)", tc.capi, got, tc.raised, ids(r.Findings))
		}
		noted := slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "lb-check-not-ready-aware not raised") })
		if noted == tc.raised {
			t.Errorf("Cluster API %s: note %v, want %v: %q", tc.capi, noted, !tc.raised, r.Notes)
		}
	}
}
