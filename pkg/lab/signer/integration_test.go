// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package signer_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
	"github.com/credwatch/credwatch/pkg/token"
)

// TestIntegrationSignerLab starts a lab whose members sign through external signers on the
// v1.36.3 line, with the controller manager: the members come up without key files, tokens one
// member mints are accepted by the other, and they carry the kid of the key the signers serve.
func TestIntegrationSignerLab(t *testing.T) {
	t0 := time.Now()
	l := labtest.Start(t, lab.Options{Members: 2, ExternalSigner: true, WithControllerManager: true})
	t.Logf("lab with external signers up after %s", time.Since(t0).Round(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mems := l.Members()
	for _, m := range mems {
		args := strings.Join(m.Args, " ")
		if !strings.Contains(args, "--service-account-signing-endpoint="+m.SigningEndpoint) || m.SigningEndpoint == "" {
			t.Errorf("%s: args lack its signing endpoint %q: %s", m.Name, m.SigningEndpoint, args)
		}
		if strings.Contains(args, "--service-account-key-file") || strings.Contains(args, "--service-account-signing-key-file") {
			t.Errorf("%s: args carry a key file beside the endpoint: %s", m.Name, args)
		}
		if s, ok := l.Signer(m.Name); !ok || s.PID() == 0 {
			t.Errorf("%s: no running signer", m.Name)
		}
	}
	kcm, err := os.ReadFile(l.ControllerManagerLogFile())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kcm), "Controller is disabled because there is no private key") {
		t.Errorf("kube-controller-manager did not turn its legacy token controller off:\n%s", l.LogTail("kube-controller-manager", 30))
	}

	// A service account and a token minted through each member, presented to the other.
	ten, err := tenant.New(l.RESTConfig(), tenant.Options{Namespace: "signer", Pods: 1, CA: l.CA()})
	if err != nil {
		t.Fatal(err)
	}
	if err := ten.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	pod := ten.Pods()[0]
	wantKID := ""
	for i, m := range mems {
		other := mems[(i+1)%len(mems)]
		tok, err := tenant.MintVia(ctx, l.MemberRESTConfig(m.Name), tenant.MintRequest{Namespace: pod.Namespace, ServiceAccount: pod.ServiceAccount,
			Bound: &tenant.Bound{Kind: "Pod", Name: pod.Name, UID: pod.UID}})
		if err != nil {
			t.Fatalf("mint through %s: %v", m.Name, err)
		}
		parsed, err := token.Decode(tok.Value)
		if err != nil {
			t.Fatal(err)
		}
		if wantKID == "" {
			wantKID = parsed.Header.KeyID
		}
		if parsed.Header.KeyID == "" || parsed.Header.KeyID != wantKID || parsed.Header.Algorithm != "RS256" {
			t.Errorf("token minted through %s: header %+v, want RS256 with kid %s", m.Name, parsed.Header, wantKID)
		}
		res := tenant.Present(ctx, other.URL, l.CA(), tok.Value, 10*time.Second)
		if res.Status != http.StatusCreated {
			t.Errorf("token minted through %s presented to %s: HTTP %d %s %s", m.Name, other.Name, res.Status, res.Error, res.Message)
		}
	}
	st := l.Status(ctx, false)
	if st.SharedSAKeyID != wantKID {
		t.Errorf("the signers sign with %s, want the lab's shared key %s", wantKID, st.SharedSAKeyID)
	}
	for _, m := range st.Members {
		if m.SignerPID == 0 {
			t.Errorf("%s: status has no signer pid", m.Name)
		}
	}
	sig, _ := l.MemberLog("signer-1")
	if !strings.Contains(string(sig), "Sign: kid "+wantKID) || !strings.Contains(string(sig), "FetchKeys: 1 keys") {
		t.Errorf("signer-1 log lacks its RPCs:\n%s", sig)
	}
}
