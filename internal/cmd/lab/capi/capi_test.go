// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmdtest"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/report"
)

func TestConfigValidate(t *testing.T) {
	ok := Config{CAPI: "v1.8.1", Cluster: "w1", Replicas: 1, HealthCheck: "tls", Deregistration: "on-machine-delete"}
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		errSub string
	}{
		{"ok", func(*Config) {}, ""},
		{"v1.8.4 https-readyz on-drain", func(c *Config) { c.CAPI, c.HealthCheck, c.Deregistration = "v1.8.4", "https-readyz", "on-drain" }, ""},
		{"unknown release", func(c *Config) { c.CAPI = "v1.9.0" }, `--capi "v1.9.0"`},
		{"unknown check", func(c *Config) { c.HealthCheck = "http" }, "http"},
		{"unknown deregistration", func(c *Config) { c.Deregistration = "never" }, "never"},
		{"even replicas", func(c *Config) { c.Replicas = 2 }, "want 1, 3 or 5"},
		{"bad name", func(c *Config) { c.Cluster = "W1" }, "DNS label"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mutate(&c)
			err := c.Validate()
			if tc.errSub == "" && err != nil || tc.errSub != "" && (err == nil || !strings.Contains(err.Error(), tc.errSub)) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.errSub)
			}
		})
	}
}

func TestStatusTable(t *testing.T) {
	st := Status{CAPI: "v1.8.1", Cluster: "w1", Phase: "ready", Kubeconfig: "/lab/w1.kubeconfig", ControlPlane: &capilab.ControlPlane{
		Machines: []capilab.Machine{{Name: "w1-control-plane-abcde", Phase: "Running", Node: "w1-control-plane-abcde", ProviderID: "lab://w1-control-plane-abcde"}},
	}}
	var b bytes.Buffer
	if err := report.Print(&b, report.Table, st); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Cluster API v1.8.1 lab: workload cluster w1, ready", "export KUBECONFIG=/lab/w1.kubeconfig", "w1-control-plane-abcde", "Running"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestUpClusterFlags: up's --capi-cluster, the deprecated --cluster with its notice on stderr,
// and the usage error when both name different clusters. An upper-case name stops Validate
// before anything starts, so the name each spelling reached shows in the error.
func TestUpClusterFlags(t *testing.T) {
	const deprecated = "Flag --cluster has been deprecated, use --capi-cluster (--cluster will be kubectl's kubeconfig cluster)\n"
	newCmd := func(s cli.Streams) *cobra.Command { return NewCommand(s, t.TempDir(), nil) }
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"capi-cluster", []string{"--capi-cluster", "W1"}, `workload cluster name "W1"`},
		{"deprecated cluster", []string{"--cluster", "W2"}, deprecated + `credwatch: error: workload cluster name "W2"`},
		{"both, the same", []string{"--capi-cluster", "W3", "--cluster", "W3"}, `workload cluster name "W3"`},
		{"both, different", []string{"--capi-cluster", "w1", "--cluster", "w2"},
			"credwatch: error: --capi-cluster w1 and --cluster w2 (its deprecated spelling) disagree: give --capi-cluster only\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cmdtest.Run(t, newCmd, nil, append([]string{"up", "-o", "json"}, tc.args...)...)
			if r.Code != cli.ExitUsage || !strings.Contains(r.Stderr, tc.stderr) || r.Stdout != "" {
				t.Errorf("exit %d, want %d and %q in stderr, nothing on stdout\nstdout:\n%s\nstderr:\n%s", r.Code, cli.ExitUsage, tc.stderr, r.Stdout, r.Stderr)
			}
		})
	}
}
