// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cli"
)

// TestOutputNotInput: every output file flag that names an input is refused before anything is
// written (exit 2, one line naming both flags), and the input is left as it was.
func TestOutputNotInput(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "kube-apiserver.log")
	const logText = "E1129 12:00:00.000000       1 authentication.go:73] \"Unable to authenticate the request\" err=\"[invalid bearer token, square/go-jose: error in cryptographic primitive]\"\n"
	key := filepath.Join(dir, "sa.key")
	keyPEM, err := os.ReadFile(keyDir + "/kubernetes/rsa.key")
	if err != nil {
		t.Fatal(err)
	}
	closed := kubeconfig(t, closedPort(t))
	watch := []string{"watch", "--kubeconfig", closed, "--interval", "1s", "--duration", "200ms", "--live", "never"}
	tests := []struct {
		name   string
		args   []string
		input  string // the file that must be left alone
		stderr string
	}{
		{"logs --html the log", []string{"logs", log, "--html", log}, log, "--html " + log + " is also argument 1"},
		{"logs --html the second log", []string{"logs", keyDir, log, "--html", "./" + filepath.Base(log)}, log, "is also argument 2"},
		{"watch --report the followed log", append(watch, "--log-file", "apiserver-1="+log, "--report", log), log, "--report " + log + " is also --log-file apiserver-1"},
		{"watch --report the kubeconfig", append(watch, "--report", closed), closed, "is also --kubeconfig"},
		{"watch --report a token file", append(watch, "--token-file", key, "--report", key), key, "is also --token-file"},
		{"token mint --out the key", []string{"token", "mint", "--key", key, "--issuer", issuer, "--out", key}, key, "--out " + key + " is also --key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(log, []byte(logText), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
				t.Fatal(err)
			}
			before, err := os.ReadFile(tt.input)
			if err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			var out, errOut bytes.Buffer
			code := Main(append([]string{"credwatch"}, tt.args...), strings.NewReader(""), &out, &errOut)
			if code != cli.ExitUsage || !strings.Contains(errOut.String(), tt.stderr) || strings.Count(errOut.String(), "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want 2 and one line containing %q", code, errOut.String(), tt.stderr)
			}
			if after, err := os.ReadFile(tt.input); err != nil || !bytes.Equal(after, before) {
				t.Errorf("input %s changed: %.80q, %v", tt.input, after, err)
			}
		})
	}
}
