// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi"
)

func TestEnvironmentString(t *testing.T) {
	tests := []struct {
		env  Environment
		want string
	}{
		{PlainLab{}, "lab (--version, default " + lab.DefaultVersion + ")"},
		{PlainLab{Version: lab.OldVersion}, "lab v1.30.14"},
		{CloudEra{Era: "in-tree", Version: lab.InTreeCloudVersion}, "cloud in-tree (v1.29.15)"},
		{CloudEra{Era: "external"}, "cloud external (" + lab.DefaultVersion + ")"},
		{ClusterAPI{}, "Cluster API (--capi, default v1.8.1)"},
		{SignerLab{}, "lab v1.36.3, external signers"},
	}
	for _, tt := range tests {
		if got := tt.env.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.env, got, tt.want)
		}
	}
}

// Run refuses a line the environment does not start on before it starts anything.
func TestRunRefusesLine(t *testing.T) {
	tests := []struct {
		scenario string
		o        RunOptions
		want     string
	}{
		{"mixed-version-roll", RunOptions{Version: lab.DefaultVersion}, "scenario mixed-version-roll always starts on v1.30.14 (asked for v1.36.3)"},
		{"cloud-password-rotated", RunOptions{Version: lab.DefaultVersion}, "scenario cloud-password-rotated always starts on v1.29.15 (asked for v1.36.3)"},
		{"capi-roll", RunOptions{Version: lab.DefaultVersion}, "scenario capi-roll with Cluster API v1.8.1 starts on v1.30.14 (asked for v1.36.3)"},
		{"capi-roll", RunOptions{Version: lab.OldVersion, CAPI: CAPIOptions{Version: capi.V1142}}, "scenario capi-roll with Cluster API v1.14.2 starts on v1.36.3 (asked for v1.30.14)"},
		{"signer-key-divergence", RunOptions{Version: lab.OldVersion}, "scenario signer-key-divergence always starts on v1.36.3 (asked for v1.30.14)"},
	}
	for _, tt := range tests {
		t.Run(tt.scenario+"/"+tt.o.Version, func(t *testing.T) {
			s, ok := Get(tt.scenario)
			if !ok {
				t.Fatalf("no scenario %s", tt.scenario)
			}
			tt.o.Dir = t.TempDir()
			ev, err := Run(context.Background(), s, tt.o)
			if ev != nil || err == nil || err.Error() != tt.want {
				t.Errorf("Run = %v, %v; want no evidence and %q", ev, err, tt.want)
			}
		})
	}
}

func TestRunWithoutEnvironment(t *testing.T) {
	if _, err := Run(context.Background(), Scenario{Name: "x"}, RunOptions{}); err == nil || err.Error() != "scenario x: no environment" {
		t.Errorf("Run = %v, want no environment", err)
	}
}
