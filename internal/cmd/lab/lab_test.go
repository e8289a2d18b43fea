// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"bytes"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cli"
)

func TestBadInputIsUsageError(t *testing.T) {
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"zero members", []string{"up", "--members", "0"}, "--members 0"},
		{"bad version", []string{"up", "--version", "v1.29.0"}, `--version "v1.29.0"`},
		{"bad lb mode", []string{"up", "--lb-mode", "sometimes"}, "--lb-mode"},
		{"bad wait", []string{"up", "--wait", "0s"}, "--wait"},
		{"signer on the old line", []string{"up", "--external-signer", "--version", "v1.30.14"}, "--external-signer: the signer needs v1.36.3"},
		{"signer hint without signer", []string{"up", "--signer-refresh-hint", "5s"}, "--signer-refresh-hint 5s"},
		{"credential provider without nodes", []string{"up", "--credential-provider-audience", "registry.example"}, "--credential-provider-audience: needs --nodes and v1.36.3"},
		{"oidc issuer on the old line", []string{"up", "--oidc-issuer", "--version", "v1.30.14"}, "--oidc-issuer: AuthenticationConfiguration v1 needs v1.36.3"},
		{"bad sa key", []string{"add-member", "--sa-key", "/nonexistent/key.pem"}, `--sa-key "/nonexistent/key.pem"`},
		{"bad member version", []string{"roll", "--version", "1.36"}, `--version "1.36"`},
		{"empty issuer", []string{"add-member", "--issuer", ""}, "--issuer: empty"},
		{"bad output", []string{"status", "-o", "sarif"}, "sarif"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := NewCommand(cli.Streams{Out: &out, ErrOut: &errOut})
			cmd.SetArgs(append(tt.args, "--dir", t.TempDir()))
			cmd.SetOut(&errOut)
			cmd.SetErr(&errOut)
			err := cmd.Execute()
			if cli.Code(err) != cli.ExitUsage || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("%v: error %v (exit %d), want exit 2 containing %q", tt.args, err, cli.Code(err), tt.msg)
			}
			if out.Len() != 0 {
				t.Errorf("stdout not empty: %q", out.String())
			}
		})
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	if got := DefaultDir(); got != "/state/credwatch/lab" {
		t.Errorf("DefaultDir() = %q", got)
	}
}
