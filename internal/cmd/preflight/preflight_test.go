// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/redact"
)

// TestPrivateKeyNeverPrinted: a <cluster>-sa Secret carrying a whole private key leaves nothing
// of it in any output format, only its kid.
func TestPrivateKeyNeverPrinted(t *testing.T) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	p := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	b64 := base64.StdEncoding.EncodeToString(p)
	doc := "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlane\nmetadata:\n  name: lab-cp\n  labels:\n    cluster.x-k8s.io/cluster-name: lab\nspec:\n  replicas: 1\n  version: VERSION\n  kubeadmConfigSpec: {}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: lab-sa\ndata:\n  tls.key: " + b64 + "\n"
	dir := t.TempDir()
	cur, pl := filepath.Join(dir, "current.yaml"), filepath.Join(dir, "planned.yaml")
	_ = os.WriteFile(cur, []byte(strings.Replace(doc, "VERSION", "v1.30.4", 1)), 0o600)
	_ = os.WriteFile(pl, []byte(strings.Replace(doc, "VERSION", "v1.31.1", 1)), 0o600)
	body := strings.Join(strings.Split(string(p), "\n")[1:3], "")
	for _, o := range []string{"table", "wide", "json", "yaml", "sarif"} {
		var out bytes.Buffer
		cmd := NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out, Known: &redact.Known{}})
		cmd.SetArgs([]string{"--current", cur, "--planned", pl, "-o", o})
		if err := cmd.Execute(); err != nil {
			t.Fatalf("-o %s: %v\n%s", o, err, out.String())
		}
		s := out.String()
		if strings.Contains(s, "PRIVATE KEY") || strings.Contains(s, body) || strings.Contains(s, b64[:40]) {
			t.Errorf("-o %s printed the private key:\n%s", o, s)
		}
		if o == "json" && !strings.Contains(s, `"signingKey": "kid:`) {
			t.Errorf("-o json lacks the kid:\n%s", s)
		}
	}
}
