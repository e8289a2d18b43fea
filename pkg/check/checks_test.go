// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

var update = flag.Bool("update", false, "rewrite golden files")

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

const (
	issA = "https://kubernetes.default.svc.cluster.local"
	issB = "https://new.example"
	kidA = "kidAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	kidB = "kidBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

func member(name, iss, kid string, issuers ...string) Member {
	return Member{Endpoint: Endpoint{Name: name, URL: "https://" + name + ":6443", FoundBy: []string{"flag"}}, Reachable: true, Version: "v1.36.3", SigningIss: iss, SigningKID: kid, JWKS: []JWK{{KID: kid, Alg: "RS256", Kty: "RSA"}}, APIAudiences: []string{iss}, Discovery: &Discovery{Issuer: iss, JWKSURI: "https://" + name + ":6443/openid/v1/jwks"}, Issuers: issuers}
}

// matrixFor computes what the real members answer: accepted when the reviewer knows the kid and
// accepts the issuer.
func matrixFor(ms []Member) *Matrix {
	mx := &Matrix{ServiceAccount: "credwatch/credwatch-probe"}
	for _, m := range ms {
		mx.Members = append(mx.Members, m.Name)
	}
	for _, i := range ms {
		row := Row{Token: "minted through " + i.Name, Via: i.Name, Issuer: i.SigningIss, KID: i.SigningKID, Audiences: i.APIAudiences}
		for _, j := range ms {
			c := Cell{Member: j.Name}
			accepts := j.SigningIss == i.SigningIss || strings.Contains(strings.Join(j.Issuers, ","), i.SigningIss)
			knows, _ := jwksHas(j, i.SigningKID)
			switch {
			case !accepts:
				c.Cause, c.Message = causeIssuer, bareBearerToken
			case !knows:
				c.Cause, c.Message = causeKey, "[invalid bearer token, invalid signature, no keys found]"
			default:
				c.Accepted = true
			}
			row.Cells = append(row.Cells, c)
		}
		mx.Rows = append(mx.Rows, row)
	}
	return mx
}

func snapshot(ms ...Member) *Snapshot {
	ms = slices.Clone(ms)
	return &Snapshot{Now: now, Server: "https://lb:6443", Members: ms, Matrix: matrixFor(ms), Sources: map[string]string{}}
}

func ids(fs []finding.Finding, minSev catalogue.Severity) []string {
	var out []string
	for _, f := range fs {
		if f.Severity.AtLeast(minSev) {
			out = append(out, f.ID+"@"+f.Member)
		}
	}
	return out
}

func TestChecks(t *testing.T) {
	healthy := []Member{member("a", issA, kidA), member("b", issA, kidA), member("c", issA, kidA)}
	tests := []struct {
		name string
		snap *Snapshot
		want []string // findings at warning or above, as id@member
	}{
		{"healthy", snapshot(healthy...), nil},
		{"key drift names the odd member", snapshot(healthy[0], healthy[1], member("d", issA, kidB)), []string{"member-key-drift@d"}},
		{"issuer not kept", snapshot(healthy[0], healthy[1], member("d", issB, kidA, issB)),
			[]string{"member-audience-drift@d", "member-issuer-drift@d"}},
		{"issuer kept: info only", func() *Snapshot {
			d := member("d", issB, kidA, issB, issA)
			d.APIAudiences = []string{issB, issA}
			return snapshot(healthy[0], healthy[1], d)
		}(), nil},
		{"unreachable member", func() *Snapshot {
			s := snapshot(healthy...)
			s.Members[2].Reachable, s.Members[2].Error = false, "GET /version: context deadline exceeded"
			return s
		}(), []string{"member-unreachable@c"}},
		{"stale lease", func() *Snapshot {
			s := snapshot(healthy...)
			s.Leases = []Lease{{Name: "kube-controller-manager", Found: true, Holder: "cp1", RenewTime: now.Add(-2 * time.Minute), Duration: 15 * time.Second, Stale: true},
				{Name: "kube-scheduler", Found: true, RenewTime: now.Add(-2 * time.Second), Duration: 15 * time.Second}, {Name: "cloud-controller-manager"}}
			return s
		}(), []string{"controllers-not-running@"}},
		{"uninitialized nodes with pending pods", func() *Snapshot {
			s := snapshot(healthy...)
			s.Nodes = []Node{{Name: "n1", Uninitialized: true}, {Name: "n2"}}
			s.Pods = []Pod{{Namespace: "x", Name: "p", Phase: "Pending", UnschedulableMsg: "0/2 nodes are available: 1 node(s) had untolerated taint {node.cloudprovider.kubernetes.io/uninitialized: true}"}}
			return s
		}(), []string{"nodes-uninitialized@"}},
		{"legacy and stale tokens", func() *Snapshot {
			s := snapshot(healthy...)
			s.LegacySecrets = []LegacySecret{{Namespace: "x", Name: "old-token", ServiceAccount: "old", LastUsed: "2026-11-28"}, {Namespace: "x", Name: "unused"}}
			s.Pods = []Pod{{Namespace: "x", Name: "p", SecretVolumes: []string{"old-token"}}}
			s.Members[0].Metrics = &Metrics{StaleTokens: 3, LegacyTokens: 5}
			return s
		}(), []string{"legacy-tokens-in-use@", "stale-tokens-in-use@"}},
		{"public issuer missing and stale keys", func() *Snapshot {
			s := snapshot(healthy...)
			s.Public = &PublicIssuer{Issuer: issA, DiscoveryURL: issA + "/.well-known/openid-configuration", JWKSURL: issA + "/keys",
				Discovery: &Discovery{Issuer: issA + "/"}, JWKS: []JWK{{KID: "retired"}}}
			return s
		}(), []string{"public-issuer-mismatch@", "public-jwks-missing-key@a", "public-jwks-stale-key@"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Run(tt.snap, Registry())
			got := ids(r.Findings, catalogue.Warning)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("findings %v, want %v\n%+v", got, tt.want, r.Findings)
			}
		})
	}
}

func TestSkippedChecks(t *testing.T) {
	s := snapshot(member("a", issA, kidA))
	s.Matrix = nil
	s.Sources[SrcMatrix] = "every TokenReview was forbidden: ..."
	s.Sources[SrcSecrets] = "list secrets: forbidden"
	r := Run(s, Registry())
	skipped := map[string]bool{}
	for _, sk := range r.Skipped {
		skipped[sk.Check] = sk.Core
	}
	want := map[string]bool{"key-drift": true, "issuer-drift": true, "audience-drift": true, "legacy-tokens": false}
	for c, core := range want {
		if got, ok := skipped[c]; !ok || got != core {
			t.Errorf("skipped[%s] = %v,%v; want core=%v", c, got, ok, core)
		}
	}
	if !r.Partial {
		t.Error("core checks skipped but not partial")
	}
	if len(ids(r.Findings, catalogue.Info)) != len(r.Skipped) {
		t.Errorf("want one check-skipped finding per skipped check: %+v", r.Findings)
	}
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil || !strings.Contains(buf.String(), "<skipped") {
		t.Errorf("junit: %v\n%s", err, buf.String())
	}

	none := snapshot(Member{Endpoint: Endpoint{Name: "x", URL: "https://x:6443"}, Error: "dial tcp: connection refused"})
	if r := Run(none, Registry()); !r.Unreachable || !r.Partial {
		t.Errorf("no member reachable: unreachable=%v partial=%v", r.Unreachable, r.Partial)
	}
}

// TestGolden pins the table and JSON rendering of a key-drift snapshot.
func TestGolden(t *testing.T) {
	s := snapshot(member("apiserver-1", issA, kidA), member("apiserver-2", issA, kidA), member("apiserver-3", issA, kidB))
	s.Members[0].Metrics = &Metrics{AuthAttempts: map[string]float64{"success": 10, "failure": 0, "error": 4}}
	s.Leases = []Lease{{Name: "kube-controller-manager", Found: true, Holder: "cp1", RenewTime: now.Add(-3 * time.Second), Duration: 15 * time.Second}}
	s.Pods = []Pod{{Namespace: "x", Name: "p", Projected: []ProjectedToken{{ExpirationSeconds: 3607}}}}
	r := Run(s, Registry())
	compareGolden(t, "key-drift", r)
}

// compareGolden renders r as a table and as JSON and compares them with (or with -update
// rewrites) testdata/<name>.table and .json.
func compareGolden(t *testing.T, name string, r *Report) {
	t.Helper()
	// The .table golden is the table on a terminal of report.Width columns; into a file it
	// has every cell whole (pkg/report's tests).
	var table bytes.Buffer
	if err := r.WriteTable(&table, report.TableOptions{Width: report.Width}); err != nil {
		t.Fatal(err)
	}
	var wide bytes.Buffer
	if err := r.WriteTable(&wide, report.TableOptions{Wide: true}); err != nil {
		t.Fatal(err)
	}
	// The default table fits report.Width columns (a word longer than a line excepted); -o wide
	// may not.
	for _, l := range strings.Split(table.String(), "\n") {
		if utf8.RuneCountInString(l) > report.Width && strings.Count(strings.TrimSpace(l), " ") > 0 {
			t.Errorf("%s.table: a line of %d columns: %q", name, utf8.RuneCountInString(l), l)
		}
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{name + ".table": table.Bytes(), name + ".wide": wide.Bytes(), name + ".json": append(js, '\n')}
	for name, got := range files {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs (run go test ./pkg/check -run Golden -update):\n%s", name, got)
		}
	}
}

func TestFormats(t *testing.T) {
	r := Run(snapshot(member("a", issA, kidA), member("b", issA, kidB)), Registry())
	for _, f := range []report.Format{report.Table, report.JSON, report.YAML, report.SARIF, report.JUnit} {
		var b bytes.Buffer
		if err := report.Print(&b, f, r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		want := map[report.Format]string{report.Table: "TRUST MATRIX", report.JSON: `"kind": "CheckReport"`, report.YAML: "apiVersion: credwatch.dev/v1alpha1",
			report.SARIF: `"ruleId": "member-key-drift"`, report.JUnit: `<testcase name="key-drift"`}[f]
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s output lacks %q:\n%s", f, want, b.String())
		}
	}
}

// TestIssuerLookalike: a verdict that compares two issuers that display alike (a homoglyph, an
// invisible character) says where they differ.
func TestIssuerLookalike(t *testing.T) {
	cyr := "https://kubernetes.default.svc.cluster.lоcal" // Cyrillic о
	zw := "https://kubernetes.default.svc.cluster.local\u200b"
	tests := []struct {
		name string
		snap *Snapshot
		id   string
		want string
	}{
		{"drift, homoglyph", snapshot(member("a", issA, kidA), member("b", issA, kidA), member("d", cyr, kidA, cyr)),
			"member-issuer-drift", `differ at byte 40 ('o' vs U+043E)`},
		{"drift, migration, zero-width", func() *Snapshot {
			d := member("d", zw, kidA, zw, issA)
			return snapshot(member("a", issA, kidA), member("b", issA, kidA), d)
		}(), "member-issuer-drift", `differ at byte 44 (U+200B vs the end)`},
		{"public issuer, homoglyph", func() *Snapshot {
			s := snapshot(member("a", issA, kidA), member("b", issA, kidA))
			s.Public = &PublicIssuer{Issuer: issA, DiscoveryURL: issA + "/.well-known/openid-configuration", JWKSURL: issA + "/keys",
				Discovery: &Discovery{Issuer: cyr}, JWKS: []JWK{{KID: kidA}}}
			return s
		}(), "public-issuer-mismatch", `differ at byte 40 (U+043E vs 'o')`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Run(tt.snap, Registry())
			var msgs []string
			for _, f := range r.Findings {
				if f.ID == tt.id {
					msgs = append(msgs, f.Message)
				}
			}
			if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, tt.want) }) {
				t.Errorf("%s messages %q, want one saying %q", tt.id, msgs, tt.want)
			}
		})
	}
}
