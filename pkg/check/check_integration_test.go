// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/cli"
	cmdcheck "github.com/credwatch/credwatch/internal/cmd/check"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/token"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/report"
)

// publicIssuer is a local HTTPS server playing a public OIDC issuer (an S3 bucket for IRSA).
type publicIssuer struct {
	srv  *httptest.Server
	jwks atomic.Value // []byte
	ca   string       // PEM file of its certificate
}

func newPublicIssuer(t *testing.T) *publicIssuer {
	p := &publicIssuer{}
	p.jwks.Store([]byte(`{"keys":[]}`))
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q,"response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`,
				p.srv.URL, p.srv.URL+"/openid/v1/jwks")
		case "/openid/v1/jwks":
			_, _ = w.Write(p.jwks.Load().([]byte))
		default:
			http.NotFound(w, r)
		}
	}))
	p.srv.StartTLS()
	t.Cleanup(p.srv.Close)
	p.ca = filepath.Join(t.TempDir(), "public-ca.pem")
	if err := os.WriteFile(p.ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// copyJWKS publishes exactly what a member serves.
func (p *publicIssuer) copyJWKS(t *testing.T, l *lab.Lab, member string) {
	cs, err := kubernetes.NewForConfig(l.MemberRESTConfig(member))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/openid/v1/jwks").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("fetch %s JWKS: %v", member, err)
	}
	p.jwks.Store(raw)
}

type env struct {
	t   *testing.T
	l   *lab.Lab
	pub *publicIssuer
}

func (e *env) endpoints() []string {
	var out []string
	for _, m := range e.l.Members() {
		out = append(out, m.URL)
	}
	return out
}

func (e *env) config() check.Config {
	ca, _ := os.ReadFile(e.pub.ca)
	return check.Config{REST: e.l.RESTConfig(), Endpoints: e.endpoints(), CreateProbeSA: true, PublicIssuerCA: ca, Timeout: 10 * time.Second}
}

func (e *env) check(t *testing.T) *check.Report {
	t.Helper()
	snap, err := check.Fetch(context.Background(), e.config())
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	r := check.Run(snap, check.Registry())
	var b bytes.Buffer
	_ = r.WriteTable(&b, report.TableOptions{})
	t.Logf("credwatch check:\n%s", b.String())
	return r
}

// command runs `credwatch check` with args and returns stdout and the exit code.
func (e *env) command(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := cmdcheck.NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	base := []string{"--kubeconfig", e.l.AdminKubeconfig(), "--public-issuer-ca", e.pub.ca}
	for _, u := range e.endpoints() {
		base = append(base, "--endpoint", u)
	}
	cmd.SetArgs(append(base, args...))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(context.Background())
	t.Logf("credwatch check %s -> exit %d\nstderr:\n%s", strings.Join(args, " "), cli.Code(err), errOut.String())
	return out.String(), cli.Code(err)
}

func withID(fs []finding.Finding, id string) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.ID == id {
			out = append(out, f)
		}
	}
	return out
}

func atLeast(fs []finding.Finding, sev catalogue.Severity) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.Severity.AtLeast(sev) {
			out = append(out, f)
		}
	}
	return out
}

// allAccepted asserts that the matrix has n rows and every member accepted every token.
func allAccepted(t *testing.T, mx *check.Matrix, n int) {
	t.Helper()
	if mx == nil || len(mx.Rows) != n {
		t.Fatalf("matrix: %+v, want %d rows", mx, n)
	}
	for _, row := range mx.Rows {
		for _, c := range row.Cells {
			if !c.Accepted {
				t.Errorf("%s -> %s rejected: %s %s", row.Via, c.Member, c.Cause, c.Message)
			}
		}
	}
}

func cellOf(r *check.Report, via, member string) check.Cell {
	for _, row := range r.Matrix.Rows {
		if row.Via != via {
			continue
		}
		for _, c := range row.Cells {
			if c.Member == member {
				return c
			}
		}
	}
	return check.Cell{}
}

// TestIntegrationCheck shares one lab (3 members, a public issuer served by a local HTTPS
// server, kube-controller-manager) across the scenarios, adding and removing members as they go.
func TestIntegrationCheck(t *testing.T) {
	pub := newPublicIssuer(t)
	l := labtest.Start(t, lab.Options{Members: 3, Issuers: []string{pub.srv.URL}, WithControllerManager: true})
	e := &env{t: t, l: l, pub: pub}
	pub.copyJWKS(t, l, "apiserver-1")
	ctx := context.Background()

	t.Run("healthy", func(t *testing.T) {
		r := e.check(t)
		if bad := atLeast(r.Findings, catalogue.Warning); len(bad) > 0 {
			t.Errorf("healthy lab: findings at warning or above: %+v", bad)
		}
		if r.Partial || len(r.Skipped) > 0 {
			t.Errorf("healthy lab: partial=%v skipped=%+v", r.Partial, r.Skipped)
		}
		allAccepted(t, r.Matrix, 3)
		if r.PublicIssuer == nil || r.PublicIssuer.Error != "" {
			t.Errorf("public issuer not checked: %+v", r.PublicIssuer)
		}
		out, code := e.command(t, "-o", "json", "--create-probe-sa")
		if code != cli.ExitOK {
			t.Errorf("exit code %d, want 0", code)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("json output: %v\n%s", err, out)
		}
		for _, k := range []string{"apiVersion", "kind", "members", "matrix", "findings", "skipped", "differences", "inventory", "liveness", "partial"} {
			if _, ok := doc[k]; !ok {
				t.Errorf("json output lacks %q", k)
			}
		}
		if doc["kind"] != "CheckReport" || doc["apiVersion"] != "credwatch.dev/v1alpha1" {
			t.Errorf("json kind/apiVersion: %v %v", doc["kind"], doc["apiVersion"])
		}
		if strings.Contains(out, "eyJ") {
			t.Errorf("json output contains a token")
		}
	})

	// Stop it now; the lease expires while the other scenarios run.
	if err := l.StopControllerManager(ctx); err != nil {
		t.Fatalf("stop kube-controller-manager: %v", err)
	}

	t.Run("public-jwks-missing-key", func(t *testing.T) {
		good := pub.jwks.Load().([]byte)
		defer pub.jwks.Store(good)
		pub.jwks.Store([]byte(`{"keys":[{"use":"sig","kty":"RSA","kid":"retired-key","alg":"RS256","n":"AQAB","e":"AQAB"}]}`))
		r := e.check(t)
		if got := withID(r.Findings, "public-jwks-missing-key"); len(got) != 1 || got[0].Severity != catalogue.Error {
			t.Errorf("public-jwks-missing-key: %+v", got)
		}
		if got := withID(r.Findings, "public-jwks-stale-key"); len(got) != 1 || !strings.Contains(got[0].Message, "retired-key") {
			t.Errorf("public-jwks-stale-key: %+v", got)
		}
		_, code := e.command(t)
		if code != cli.ExitFindings {
			t.Errorf("exit code %d, want 1", code)
		}
	})

	t.Run("rbac", func(t *testing.T) { testRBAC(t, e) })

	t.Run("hanging-member", func(t *testing.T) {
		// A "member" that accepts connections and never answers: its row is unreachable after one
		// timeout; the run goes on.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
			}
		}()
		cfg := e.config()
		cfg.Timeout = 2 * time.Second
		cfg.Endpoints = append(cfg.Endpoints, "https://"+ln.Addr().String())
		start := time.Now()
		snap, err := check.Fetch(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		r := check.Run(snap, check.Registry())
		got := withID(r.Findings, "member-unreachable")
		if len(got) != 1 || got[0].Member != ln.Addr().String() {
			t.Errorf("member-unreachable for the hanging member: %+v", got)
		}
		if r.Partial || r.Matrix == nil || len(r.Matrix.Rows) != 4 || !cellOf(r, "apiserver-1", "apiserver-2").Accepted {
			t.Errorf("the rest of the run: partial=%v skipped=%+v", r.Partial, r.Skipped)
		}
		if c := cellOf(r, "apiserver-1", ln.Addr().String()); c.Cause != "unreachable" {
			t.Errorf("cell for the hanging member: %+v", c)
		}
		t.Logf("check with a hanging member took %s (timeout %s)", took, cfg.Timeout)
	})

	t.Run("key-drift", func(t *testing.T) {
		m, err := l.AddMember(ctx, lab.MemberOptions{SAKey: lab.SAKeyNew})
		if err != nil {
			t.Fatalf("add member: %v", err)
		}
		defer removeMember(t, l, m.Name)
		r := e.check(t)
		got := withID(r.Findings, "member-key-drift")
		if len(got) != 1 || got[0].Member != m.Name || got[0].Severity != catalogue.Error {
			t.Fatalf("member-key-drift naming %s: %+v", m.Name, got)
		}
		for _, old := range []string{"apiserver-1", "apiserver-2", "apiserver-3"} {
			if c := cellOf(r, m.Name, old); c.Cause != "signing-key-unknown" {
				t.Errorf("%s -> %s: %+v, want signing-key-unknown", m.Name, old, c)
			}
			if c := cellOf(r, old, m.Name); c.Cause != "signing-key-unknown" {
				t.Errorf("%s -> %s: %+v, want signing-key-unknown", old, m.Name, c)
			}
		}
		out, code := e.command(t)
		if code != cli.ExitFindings || !strings.Contains(out, "signing-key-unknown") || !strings.Contains(out, "TRUST MATRIX") {
			t.Errorf("command: exit %d, table:\n%s", code, out)
		}
	})

	t.Run("key-drift-old-line", func(t *testing.T) {
		// A v1.30 member with its own key: it tries every key and logs the go-jose crypto error.
		if _, err := lab.Binary(lab.DefaultBinDir(), lab.OldVersion, "kube-apiserver"); err != nil {
			t.Fatalf("%v (run make lab-binaries)", err)
		}
		m, err := l.AddMember(ctx, lab.MemberOptions{Version: lab.OldVersion, SAKey: lab.SAKeyNew})
		if err != nil {
			t.Fatalf("add member: %v", err)
		}
		defer removeMember(t, l, m.Name)
		r := e.check(t)
		if got := withID(r.Findings, "member-key-drift"); len(got) != 1 || got[0].Member != m.Name {
			t.Fatalf("member-key-drift naming %s: %+v", m.Name, got)
		}
		if c := cellOf(r, "apiserver-1", m.Name); c.Cause != "signing-key-unknown" || !strings.Contains(c.Message, "error in cryptographic primitive") {
			t.Errorf("apiserver-1 -> %s (v1.30): %+v, want signing-key-unknown with the go-jose crypto error", m.Name, c)
		}
		if c := cellOf(r, m.Name, "apiserver-1"); c.Cause != "signing-key-unknown" || !strings.Contains(c.Message, "no keys found") {
			t.Errorf("%s -> apiserver-1 (v1.36): %+v, want signing-key-unknown with no keys found", m.Name, c)
		}
	})

	t.Run("issuer-change", func(t *testing.T) {
		other := "https://issuer.example.test"
		m, err := l.AddMember(ctx, lab.MemberOptions{Issuers: []string{other}})
		if err != nil {
			t.Fatalf("add member: %v", err)
		}
		r := e.check(t)
		got := withID(atLeast(r.Findings, catalogue.Error), "member-issuer-drift")
		if len(got) != 1 || got[0].Member != m.Name {
			t.Errorf("old issuer not kept: member-issuer-drift naming %s: %+v", m.Name, got)
		}
		if c := cellOf(r, "apiserver-1", m.Name); c.Cause != "issuer-not-accepted" {
			t.Errorf("apiserver-1 -> %s: %+v, want issuer-not-accepted", m.Name, c)
		}
		removeMember(t, l, m.Name)

		m, err = l.AddMember(ctx, lab.MemberOptions{Issuers: []string{other, pub.srv.URL}})
		if err != nil {
			t.Fatalf("add member: %v", err)
		}
		defer removeMember(t, l, m.Name)
		r = e.check(t)
		if got := withID(atLeast(r.Findings, catalogue.Warning), "member-issuer-drift"); len(got) > 0 {
			t.Errorf("old issuer kept: member-issuer-drift: %+v", got)
		}
		if c := cellOf(r, "apiserver-1", m.Name); !c.Accepted {
			t.Errorf("old issuer kept: apiserver-1 -> %s: %+v, want accepted", m.Name, c)
		}
	})

	t.Run("audience-change", func(t *testing.T) {
		m, err := l.AddMember(ctx, lab.MemberOptions{APIAudiences: []string{"https://audience.example.test"}})
		if err != nil {
			t.Fatalf("add member: %v", err)
		}
		defer removeMember(t, l, m.Name)
		r := e.check(t)
		if got := withID(atLeast(r.Findings, catalogue.Error), "member-audience-drift"); len(got) != 1 || got[0].Member != m.Name {
			t.Errorf("member-audience-drift naming %s: %+v", m.Name, got)
		}
	})

	t.Run("clock-skew", func(t *testing.T) {
		// A token as a member whose clock runs 5 minutes ahead would mint it, handed in with --token-file.
		pemData, err := os.ReadFile(l.SharedSAKeyFile())
		if err != nil {
			t.Fatal(err)
		}
		ks, err := keys.ParsePEM(pemData, "sa.key")
		if err != nil || len(ks) == 0 {
			t.Fatalf("shared key: %v", err)
		}
		tok, err := token.Mint(token.MintOptions{Key: ks[0], Issuer: pub.srv.URL, IssuedAt: time.Now().Add(5 * time.Minute),
			ExpirationSeconds: 3600, Namespace: "credwatch", ServiceAccount: token.Ref{Name: "credwatch-probe", UID: "00000000-0000-0000-0000-000000000000"}})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "skewed-token")
		if err := os.WriteFile(file, []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
		out, _ := e.command(t, "-o", "json", "--token-file", file)
		var r check.Report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("json: %v", err)
		}
		if len(r.Tokens) != 1 || len(r.Tokens[0].Cells) != 3 {
			t.Fatalf("tokens: %+v", r.Tokens)
		}
		for _, c := range r.Tokens[0].Cells {
			if c.Accepted || c.Cause != "token-not-yet-valid" {
				t.Errorf("%s: %+v, want token-not-yet-valid", c.Member, c)
			}
		}
		if strings.Contains(out, strings.Split(tok, ".")[2]) {
			t.Error("the token's signature is in the output")
		}
	})

	t.Run("etcd-member-removed", func(t *testing.T) {
		m, err := l.AddMember(ctx, lab.MemberOptions{})
		if err != nil {
			t.Fatalf("add member: %v", err)
		}
		defer removeMember(t, l, m.Name)
		if err := l.RemoveMember(ctx, m.Name, lab.RemoveOptions{EtcdFirst: true, KeepAPIServer: true}); err != nil {
			t.Fatalf("remove etcd member of %s: %v", m.Name, err)
		}
		cfg := e.config()
		cfg.Timeout = 4 * time.Second // the member without etcd hangs on writes; keep the test short
		if !slices.Contains(cfg.Endpoints, m.URL) {
			cfg.Endpoints = append(cfg.Endpoints, m.URL)
		}
		snap, err := check.Fetch(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := check.Run(snap, check.Registry())
		var b bytes.Buffer
		_ = r.WriteTable(&b, report.TableOptions{})
		t.Logf("credwatch check:\n%s", b.String())
		// Honest answer: the member without etcd is unreachable, or answers but cannot mint.
		got := withID(r.Findings, "member-unreachable")
		if len(got) == 0 || got[0].Member != m.Name {
			t.Errorf("member-unreachable naming %s: %+v", m.Name, got)
		}
	})

	t.Run("controllers-not-running", func(t *testing.T) {
		deadline := time.Now().Add(90 * time.Second)
		for {
			r := e.check(t)
			got := withID(r.Findings, "controllers-not-running")
			if len(got) == 1 && strings.Contains(got[0].Message, "ReplicaSets will not create Pods") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no controllers-not-running 90 s after stopping kube-controller-manager: %+v; leases %+v", got, r.Liveness.Leases)
			}
			time.Sleep(3 * time.Second)
		}
	})

	// Last: it replaces every member. At every step, nothing at warning or above (other than the
	// controller manager stopped above).
	t.Run("healthy-roll", func(t *testing.T) {
		err := l.Roll(ctx, lab.MemberOptions{}, func(added, removed lab.Member) {
			// The old member's etcd member goes first, so it cannot delete its own endpoint lease:
			// the EndpointSlice lists it until the lease expires (an operator should see that, and
			// watch reports it). Check once the slice is back to the running members.
			t0 := time.Now()
			labtest.WaitEndpointSlice(t, l, len(l.Members()))
			t.Logf("%s left the EndpointSlice %s after it was stopped", removed.Name, time.Since(t0).Round(time.Second))
			r := e.check(t)
			for _, f := range atLeast(r.Findings, catalogue.Warning) {
				if f.ID != "controllers-not-running" {
					t.Errorf("after replacing %s by %s: %s [%s] %s", removed.Name, added.Name, f.ID, f.Member, f.Message)
				}
			}
			if r.Partial || r.Matrix == nil || len(r.Matrix.Rows) != 3 {
				t.Errorf("after replacing %s by %s: partial=%v skipped=%+v", removed.Name, added.Name, r.Partial, r.Skipped)
			}
		})
		if err != nil {
			t.Fatalf("roll: %v", err)
		}
	})
}

func removeMember(t *testing.T, l *lab.Lab, name string) {
	t.Helper()
	if err := l.RemoveMember(context.Background(), name, lab.RemoveOptions{}); err != nil {
		t.Errorf("remove %s: %v", name, err)
	}
}
