// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/cli"
	cmdscenario "github.com/credwatch/credwatch/internal/cmd/lab/scenario"
	"github.com/credwatch/credwatch/pkg/lab/cloudlab"
	labscenario "github.com/credwatch/credwatch/pkg/lab/scenario"
)

// TestIntegrationScenarioCommand runs `credwatch lab scenario cloud-password-rotated` as a user
// does: the command finds credwatch-cloudlab on PATH, which starts the in-tree lab beside the
// vCenter simulator, runs the steps, tears everything down and prints the evidence.
func TestIntegrationScenarioCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, labscenario.CloudLabProgram), "github.com/credwatch/credwatch/cmd/credwatch-cloudlab")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build credwatch-cloudlab: %v\n%s", err, out)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := cmdscenario.NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"cloud-password-rotated", "-o", "json", "--window", "8s"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	start := time.Now()
	err := cmd.ExecuteContext(ctx)
	t.Logf("credwatch lab scenario cloud-password-rotated: exit %d after %s\n%s", cli.Code(err), time.Since(start).Round(time.Second), lastLines(errOut.String(), 40))
	if err != nil {
		t.Fatal(err)
	}
	var ev labscenario.Evidence
	if err := json.Unmarshal(out.Bytes(), &ev); err != nil || ev.Cloud == nil {
		t.Fatalf("-o json: %v, cloud evidence %v:\n%s", err, ev.Cloud != nil, out.String())
	}
	if ev.Cloud.Era != cloudlab.InTree || len(ev.Cloud.Steps) != 6 {
		t.Fatalf("evidence of era %q with %d steps, want in-tree with 6", ev.Cloud.Era, len(ev.Cloud.Steps))
	}
	c := checker{t, ev.Cloud}
	for _, s := range ev.Cloud.Steps {
		t.Logf("step %s: credwatch check %v; credwatch cloud %v", s.Name, s.Findings, s.Cloud)
	}
	c.untilLogin()
	// The in-tree era runs with zones: the node that joins after the sessions ended crash-loops,
	// and the restarted controller manager is rejected.
	s := c.step("sessions-ended")
	c.want(s, s.Has("kubelet/node-2", `"Kubelet failed to get node info"`) && s.Restarts["kubelet/node-2"] >= cloudlab.CrashLoopRestarts,
		"node-2's kubelet exits at start-up and is started again ≥ %d times (got %d)", cloudlab.CrashLoopRestarts, s.Restarts["kubelet/node-2"])
	c.want(s, slices.Contains(s.Findings, "kubelet-crashloop node/node-2"), "the evidence carries check's kubelet-crashloop for node-2: %v", s.Findings)
	// credwatch cloud --config on the host's files names the looping kubelet as a consumer of its
	// node's file, whose credential vCenter rejects.
	c.want(s, slices.Contains(s.Cloud, "kubelet-crashloop node/node-2") &&
		slices.ContainsFunc(s.Cloud, func(f string) bool { return strings.HasPrefix(f, "consumer kubelet on node-2 (crash-looping") }),
		"the evidence carries cloud's kubelet-crashloop and node-2's kubelet as a crash-looping consumer: %v", s.Cloud)
	s = c.step("controller-restarted")
	c.want(s, s.Has("kube-controller-manager", "Login failure"), "the controller manager logs the rejected login")
	s = c.step("restored")
	c.want(s, s.LoginsAccepted > 0, "the restarted consumers log in with the restored password")
	c.want(s, !slices.ContainsFunc(s.Findings, func(f string) bool { return strings.HasPrefix(f, "kubelet-crashloop") }),
		"no kubelet-crashloop after the fix: %v", s.Findings)
	c.want(s, !slices.ContainsFunc(s.Cloud, func(f string) bool {
		return strings.HasPrefix(f, "kubelet-crashloop") || strings.HasPrefix(f, "cloud-credential-rejected")
	}),
		"cloud reports neither a rejected credential nor a crash loop after the fix: %v", s.Cloud)
	if strings.Contains(out.String(), cloudlab.NewPassword) || strings.Contains(errOut.String(), cloudlab.NewPassword) ||
		strings.Contains(out.String(), password) || strings.Contains(errOut.String(), password) {
		t.Error("a password of the scenario's account is in the output")
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
