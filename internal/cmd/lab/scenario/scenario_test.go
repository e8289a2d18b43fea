// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/report"
)

func TestValidate(t *testing.T) {
	ok := options{members: 3, window: 12 * time.Second}
	tests := []struct {
		name    string
		mod     func(o *options)
		wantErr string
	}{
		{"list", func(o *options) {}, ""},
		{"known", func(o *options) { o.name = "key-drift"; o.version = "v1.30.14" }, ""},
		{"unknown", func(o *options) { o.name = "nope" }, `scenario "nope": unknown`},
		{"bad version", func(o *options) { o.name = "key-drift"; o.version = "v1.29.0" }, `--version "v1.29.0"`},
		{"fixed line", func(o *options) { o.name = "mixed-version-roll"; o.version = "v1.36.3" }, "always starts on v1.30.14"},
		{"cloud line", func(o *options) { o.name = "cloud-password-rotated-external"; o.version = "v1.36.3" }, "runs on its cloud lab's own line"},
		{"capi", func(o *options) { o.name = "capi-roll"; o.capi.Version = "v1.14.2"; o.capi.HealthCheck = "tcp" }, ""},
		{"capi elsewhere", func(o *options) { o.name = "key-drift"; o.capi.Version = "v1.8.1" }, "key-drift is not one"},
		{"provider pod", func(o *options) { o.name = "capi-self-managed-roll"; o.capi.ProviderInCluster = true }, ""},
		{"provider pod, no move", func(o *options) { o.name = "capi-roll"; o.capi.ProviderInCluster = true }, "--provider-in-cluster is for capi-self-managed-roll"},
		{"one member", func(o *options) { o.members = 1 }, "--members 1"},
		{"tiny window", func(o *options) { o.window = time.Millisecond }, "--window"},
		{"bad bin dir", func(o *options) { o.binDir = "/nonexistent" }, "make lab-binaries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ok
			tt.mod(&o)
			err := o.validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || cli.Code(err) != cli.ExitUsage {
				t.Fatalf("err = %v (exit %d), want %q and exit 2", err, cli.Code(err), tt.wantErr)
			}
		})
	}
}

func TestList(t *testing.T) {
	var out bytes.Buffer
	o := options{streams: cli.Streams{Out: &out}, output: &cli.OutputFlag{Format: report.JSON}}
	if err := o.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind": "ScenarioList"`, `"name": "key-drift"`, `"version": "v1.30.14"`, `"environment": "cloud in-tree (v1.29.15)"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %s:\n%s", want, out.String())
		}
	}
}

// --list lists every scenario, the cloud ones included; with a NAME it is a usage error.
func TestListFlag(t *testing.T) {
	tests := []struct {
		args    []string
		want    []string
		wantErr string
	}{
		{args: []string{"--list"}, want: []string{"key-drift", "cloud-password-rotated", "cloud-password-rotated-external", "cloud-password-rotated-openstack"}},
		{args: []string{"--list", "key-drift"}, wantErr: `--list takes no scenario name (got "key-drift")`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			cmd := NewCommand(cli.Streams{Out: &out, ErrOut: &out})
			cmd.SetArgs(tt.args)
			err := cmd.ExecuteContext(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || cli.Code(err) != cli.ExitUsage {
					t.Fatalf("err = %v, want %q and exit 2", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w+" ") {
					t.Errorf("--list lacks %s:\n%s", w, out.String())
				}
			}
		})
	}
}
