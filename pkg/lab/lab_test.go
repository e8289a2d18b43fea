// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
)

func TestOptionsComplete(t *testing.T) {
	tests := []struct {
		name    string
		in      Options
		wantErr string
		check   func(t *testing.T, o Options)
	}{
		{name: "defaults", in: Options{Dir: "x"}, check: func(t *testing.T, o Options) {
			if o.Members != 3 || o.EtcdMembers != 3 || o.Version != DefaultVersion || o.LBMode != LBReady ||
				o.Wait != 90*time.Second || len(o.Issuers) != 1 || o.Issuers[0] != DefaultIssuer || !filepath.IsAbs(o.Dir) {
				t.Errorf("defaults: %+v", o)
			}
		}},
		{name: "etcd members default to members", in: Options{Dir: "x", Members: 5}, check: func(t *testing.T, o Options) {
			if o.EtcdMembers != 5 {
				t.Errorf("etcd members %d", o.EtcdMembers)
			}
		}},
		{name: "no dir", in: Options{}, wantErr: "lab directory is not set"},
		{name: "too many members", in: Options{Dir: "x", Members: 51}, wantErr: "members 51"},
		{name: "negative etcd", in: Options{Dir: "x", EtcdMembers: -1}, wantErr: "etcd members -1"},
		{name: "bad lb mode", in: Options{Dir: "x", LBMode: "sometimes"}, wantErr: `unknown load-balancer mode "sometimes"`},
		{name: "external signer on the new line", in: Options{Dir: "x", ExternalSigner: true}, check: func(t *testing.T, o Options) {
			if !o.ExternalSigner || o.Version != DefaultVersion {
				t.Errorf("external signer: %+v", o)
			}
		}},
		{name: "external signer on the old line", in: Options{Dir: "x", ExternalSigner: true, Version: OldVersion},
			wantErr: "external signer: kube-apiserver v1.30.14 has the ExternalServiceAccountTokenSigner gate off (on by default from 1.34)"},
		{name: "signer refresh hint without signers", in: Options{Dir: "x", SignerRefreshHint: 5 * time.Second}, wantErr: "signer refresh hint 5s: want at least 1s, with external signers"},
		{name: "signer refresh hint below a second", in: Options{Dir: "x", ExternalSigner: true, SignerRefreshHint: time.Millisecond}, wantErr: "signer refresh hint 1ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.in
			err := o.complete()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("complete() = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o)
		})
	}
}

func TestBinaryMissingNamesMakeTarget(t *testing.T) {
	_, err := Binary(t.TempDir(), OldVersion, "kube-apiserver")
	if err == nil || !strings.Contains(err.Error(), "make lab-binaries") || !strings.Contains(err.Error(), OldVersion) {
		t.Fatalf("Binary() = %v", err)
	}
}

func TestServingCertificateNamesMember(t *testing.T) {
	c, err := pki.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	l := &Lab{o: Options{Dir: t.TempDir()}, ca: c, x: 42}
	if err := os.MkdirAll(l.path("pki"), 0o755); err != nil {
		t.Fatal(err)
	}
	crt, _, err := l.servingCert("apiserver-7", "127.0.42.17")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(crt)
	b, _ := pem.Decode(data)
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "apiserver-7" {
		t.Errorf("CN = %q", cert.Subject.CommonName)
	}
	for _, host := range []string{"127.0.42.17", "127.0.42.1", "kubernetes.default.svc"} {
		if err := cert.VerifyHostname(host); err != nil {
			t.Errorf("serving cert does not cover %s: %v", host, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: c.Pool()}); err != nil {
		t.Errorf("not signed by the lab CA: %v", err)
	}
}

func TestValidateRegistries(t *testing.T) {
	for _, tt := range []struct {
		regs []string
		want string
	}{
		{[]string{"127.0.0.1:5000", "localhost:5001", "127.0.3.9:80"}, ""},
		{[]string{"127.0.0.1"}, "want host:port"},
		{[]string{"127.0.0.1:0"}, "want 1..65535"},
		{[]string{"10.0.0.5:5000"}, "loopback"},
		{[]string{"registry.example:5000"}, "loopback"},
	} {
		err := validateRegistries(tt.regs)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v: %v, want %q", tt.regs, err, tt.want)
		}
	}
}
