// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/credwatch/credwatch/internal/cli"
	cmdcheck "github.com/credwatch/credwatch/internal/cmd/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationCheckAllContexts runs `credwatch check --all-contexts` against two labs at once,
// one healthy and one whose second member signs with a key of its own, through one kubeconfig
// with a context for each: one summary row per cluster, the drifted one's trust pairs broken, and
// exit 1; with -o json, both full reports in one FleetCheckReport.
func TestIntegrationCheckAllContexts(t *testing.T) {
	healthy := labtest.Start(t, lab.Options{Members: 2})
	drifted := labtest.Start(t, lab.Options{Members: 1})
	if _, err := drifted.AddMember(context.Background(), lab.MemberOptions{SAKey: lab.SAKeyNew}); err != nil {
		t.Fatalf("AddMember: %v", err)
	}
	labtest.WaitEndpointSlice(t, healthy, 2)
	labtest.WaitEndpointSlice(t, drifted, 2)
	kubeconfig := mergeKubeconfigs(t, map[string]string{"healthy": healthy.AdminKubeconfig(), "drifted": drifted.AdminKubeconfig()})

	run := func(t *testing.T, args ...string) (string, int) {
		var out, errOut bytes.Buffer
		cmd := cmdcheck.NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig, "--create-probe-sa"}, args...))
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		err := cmd.ExecuteContext(context.Background())
		t.Logf("credwatch check %s: exit %d (%v)\n%s\nstderr:\n%s", strings.Join(args, " "), cli.Code(err), err, out.String(), errOut.String())
		return out.String(), cli.Code(err)
	}
	t.Run("table", func(t *testing.T) {
		out, code := run(t, "--all-contexts")
		if code != cli.ExitFindings {
			t.Errorf("exit %d, want 1", code)
		}
		rows := map[string]string{}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for _, l := range lines[1:] {
			rows[strings.Fields(l)[0]] = l
		}
		if len(lines) != 3 || rows["healthy"] == "" || rows["drifted"] == "" {
			t.Fatalf("want a header and one row per context, got:\n%s", out)
		}
		if h := strings.Fields(rows["healthy"]); h[2] != "none" || h[3] != "2/2" || h[5] != "0" || h[6] != "no" {
			t.Errorf("healthy row %q: want no finding, 2/2 members up, no broken pair, not partial", rows["healthy"])
		}
		if d := strings.Fields(rows["drifted"]); d[2] != "error" || !strings.Contains(rows["drifted"], "key-drift") || d[6] != "2" {
			t.Errorf("drifted row %q: want an error finding naming the key drift and 2 broken pairs", rows["drifted"])
		}
	})
	t.Run("json", func(t *testing.T) {
		out, code := run(t, "--contexts", "drifted,healthy", "-o", "json")
		if code != cli.ExitFindings {
			t.Errorf("exit %d, want 1", code)
		}
		var doc struct {
			Kind     string `json:"kind"`
			Clusters []struct {
				Context string `json:"context"`
				Summary struct {
					BrokenTrustPairs int `json:"brokenTrustPairs"`
				} `json:"summary"`
				Report struct {
					Kind    string            `json:"kind"`
					Members []json.RawMessage `json:"members"`
				} `json:"report"`
			} `json:"clusters"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("json: %v", err)
		}
		if doc.Kind != "FleetCheckReport" || len(doc.Clusters) != 2 || doc.Clusters[0].Context != "drifted" || doc.Clusters[1].Context != "healthy" {
			t.Fatalf("want a FleetCheckReport of drifted then healthy, got %+v", doc)
		}
		for _, c := range doc.Clusters {
			if c.Report.Kind != "CheckReport" || len(c.Report.Members) != 2 {
				t.Errorf("%s: want its full CheckReport with 2 members, got kind %q with %d", c.Context, c.Report.Kind, len(c.Report.Members))
			}
		}
		if doc.Clusters[0].Summary.BrokenTrustPairs != 2 {
			t.Errorf("drifted: %d broken pairs, want 2", doc.Clusters[0].Summary.BrokenTrustPairs)
		}
	})
}

// mergeKubeconfigs writes one kubeconfig with a context, cluster and user per named file.
func mergeKubeconfigs(t *testing.T, files map[string]string) string {
	t.Helper()
	merged := clientcmdapi.NewConfig()
	for name, f := range files {
		c, err := clientcmd.LoadFromFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cur := c.Contexts[c.CurrentContext]
		if cur == nil {
			t.Fatalf("%s: no current context", f)
		}
		merged.Clusters[name] = c.Clusters[cur.Cluster]
		merged.AuthInfos[name] = c.AuthInfos[cur.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		t.Fatal(err)
	}
	return path
}
