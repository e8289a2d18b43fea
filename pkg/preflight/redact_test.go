// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// TestBootCommandsRedacted: a pre- or postKubeadmCommand that rewrites the issuer is printed in
// the issuer-placeholder finding; a credential in it, or in the script it runs, is redacted in
// the report itself, before any writer (issue 37).
func TestBootCommandsRedacted(t *testing.T) {
	planned, err := os.ReadFile(filepath.Join("testdata", "kcp-placeholder", "planned.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, spec, secret string
	}{
		{"curl -u", `
    preKubeadmCommands:
    - curl -sf -u admin:Pl4ntedCurlPw https://vault.example/issuer > /tmp/iss && sed -i "s|PLACEHOLDER_ISSUER|$(cat /tmp/iss)|" /run/kubeadm/kubeadm.yaml`, "Pl4ntedCurlPw"},
		{"header", `
    postKubeadmCommands:
    - 'curl -H "X-Vault-Token: hvs.Pl4ntedVaultToken0123" https://v/x | sh; sed -i s/PLACEHOLDER_ISSUER/x/ /etc/kubernetes/manifests/kube-apiserver.yaml'`, "Pl4ntedVaultToken0123"},
		{"script file", `
    files:
    - path: /opt/issuer.sh
      content: |
        sed -i "s|PLACEHOLDER_ISSUER|https://robot:Pl4ntedUrlPw@issuer.example|" /run/kubeadm/kubeadm.yaml
    preKubeadmCommands:
    - bash /opt/issuer.sh --password Pl4ntedFlagPw`, "Pl4nted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			doc := strings.Replace(string(planned), "  kubeadmConfigSpec:\n", "  kubeadmConfigSpec:"+tc.spec+"\n", 1)
			if err := os.WriteFile(filepath.Join(dir, "planned.yaml"), []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			cur, err := input.Load(t.Context(), filepath.Join("testdata", "kcp-placeholder", "current.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			pl, err := input.Load(t.Context(), filepath.Join(dir, "planned.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			r, err := preflight.Run(preflight.Config{Current: cur, Planned: pl, CAPIVersion: "v1.8.1"})
			if err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), "rewritten") {
				t.Fatalf("no finding names the rewrite: the test proves nothing\n%s", out)
			}
			if strings.Contains(string(out), tc.secret) {
				t.Errorf("%q is in the report:\n%s", tc.secret, out)
			}
		})
	}
}
