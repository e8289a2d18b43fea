// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/lab/cloudlab"
	"github.com/credwatch/credwatch/pkg/lab/tally"
	"github.com/credwatch/credwatch/pkg/lab/tenant"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/report"
)

func TestAuthError(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"new line", `E1129 21:09:48.148610   18874 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, invalid signature, no keys found]"`, "[invalid bearer token, invalid signature, no keys found]"},
		{"bare", `E1129 21:09:48.148610   18874 authentication.go:73] "Unable to authenticate the request" err="invalid bearer token"`, "invalid bearer token"},
		{"escaped quotes", `E1129 22:00:00.000000 1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, token audiences [\"https://a\"] is invalid for the target audiences [\"https://b\"]]"`, `[invalid bearer token, token audiences ["https://a"] is invalid for the target audiences ["https://b"]]`},
		{"no err", `I1129 something else`, ""},
		{"unterminated", `E1129 x err="[invalid bearer`, "[invalid bearer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AuthError(tt.line); got != tt.want {
				t.Errorf("AuthError = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCountMessages(t *testing.T) {
	lines := []string{`a err="x"`, `b err="y"`, `c err="y"`, `no error here`}
	got := countMessages(lines)
	if len(got) != 3 || got[0].Message != "y" || got[0].Count != 2 || got[0].Example != `b err="y"` || got[2].Message != "no error here" {
		t.Errorf("countMessages = %+v", got)
	}
}

func TestCountMessagesStreamIDs(t *testing.T) {
	lines := []string{`err="[x, Get \"u\": stream error: stream ID 929; INTERNAL_ERROR]"`, `err="[x, Get \"u\": stream error: stream ID 933; INTERNAL_ERROR]"`}
	got := countMessages(lines)
	if len(got) != 1 || got[0].Count != 2 || got[0].Message != `[x, Get "u": stream error: stream ID N; INTERNAL_ERROR]` || got[0].Example != lines[0] {
		t.Errorf("countMessages = %+v", got)
	}
}

// TestCountLines groups klog lines by their text after the header (each member's signer lines).
func TestCountLines(t *testing.T) {
	lines := []string{
		`E1207 03:07:59.708973   31486 keycache.go:79] when syncing supported public keys(Stale set of keys will be supported): x`,
		`E1207 03:08:09.713359   31486 keycache.go:79] when syncing supported public keys(Stale set of keys will be supported): x`,
		`E1207 03:08:10.000001   31486 keycache.go:123] Key id "k" not found after refresh`,
	}
	got := countLines(lines)
	if len(got) != 2 || got[0].Count != 2 || got[0].Message != "when syncing supported public keys(Stale set of keys will be supported): x" ||
		got[0].Example != lines[0] || got[1].Message != `Key id "k" not found after refresh` {
		t.Errorf("countLines = %+v", got)
	}
}

func TestRegistry(t *testing.T) {
	want := []string{"healthy-roll", "key-drift", "issuer-change", "audience-change", "bound-object-deleted", "serviceaccount-recreated", "clock-skew", "etcd-member-removed", "mixed-version-roll", "signer-key-divergence", "signer-stale", "signer-down-at-restart", "authn-config-drift", "jwt-issuer-jwks-unreachable", "node-audience-denied", "capi-roll", "capi-sa-secret-deleted", "capi-issuer-placeholder", "capi-self-managed-roll", "cloud-password-rotated", "cloud-password-rotated-external", "cloud-password-rotated-openstack"}
	if got := Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Names = %v, want %v", got, want)
	}
	for _, s := range All() {
		cloud, isCloud := s.Environment.(CloudEra)
		if s.Environment == nil || (s.Run == nil) != isCloud || s.Summary == "" {
			t.Errorf("scenario %s is incomplete: a summary, an environment, and Run unless the environment is a CloudEra", s.Name)
		}
		if isCloud && !slices.Contains(cloudlab.Eras(), cloud.Era) {
			t.Errorf("scenario %s: cloud era %q is none of cloudlab's %v", s.Name, cloud.Era, cloudlab.Eras())
		}
	}
	if _, ok := Get("nope"); ok {
		t.Error("Get(nope) found something")
	}
	var b bytes.Buffer
	if err := NewList().WriteTable(&b, report.TableOptions{}); err != nil || !regexp.MustCompile(`(?m)^mixed-version-roll +lab v1\.30\.14 `).MatchString(b.String()) ||
		!regexp.MustCompile(`(?m)^capi-roll +Cluster API \(--capi, default v1\.8\.1\) `).MatchString(b.String()) ||
		!regexp.MustCompile(`(?m)^signer-stale +lab v1\.36\.3, external signers `).MatchString(b.String()) {
		t.Errorf("list table = %q, %v", b.String(), err)
	}
}

func TestSignSkewed(t *testing.T) {
	ks, err := keys.LoadPEMFile(t.Context(), "testdata/sa.key")
	if err != nil {
		t.Fatal(err)
	}
	pod := tenant.Pod{Namespace: "ns", Name: "p", UID: "pod-uid", ServiceAccount: "sa"}
	now := time.Unix(1_800_000_000, 0)
	for _, sk := range skews {
		t.Run(sk.Name, func(t *testing.T) {
			tok, err := signSkewed(ks[0], "https://issuer", pod, "sa-uid", sk, now)
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(tok, ".")
			if len(parts) != 3 {
				t.Fatalf("token has %d parts", len(parts))
			}
			var hdr map[string]string
			decode(t, parts[0], &hdr)
			if hdr["kid"] != ks[0].KeyID || hdr["alg"] != "RS256" {
				t.Errorf("header = %v, want kid %s", hdr, ks[0].KeyID)
			}
			var c map[string]any
			decode(t, parts[1], &c)
			iat := now.Add(sk.Shift).Unix()
			if int64(c["iat"].(float64)) != iat || int64(c["exp"].(float64)) != iat+int64(sk.Life.Seconds()) {
				t.Errorf("times = iat %v exp %v, want iat %d", c["iat"], c["exp"], iat)
			}
			if _, has := c["nbf"]; has == sk.NoNbf {
				t.Errorf("nbf present = %v, NoNbf = %v", has, sk.NoNbf)
			}
			if c["sub"] != "system:serviceaccount:ns:sa" {
				t.Errorf("sub = %v", c["sub"])
			}
		})
	}
}

func decode(t *testing.T, seg string, v any) {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

func TestEvidenceTable(t *testing.T) {
	ev := &Evidence{Scenario: "key-drift", Line: "v1.36.3", Summary: "s", Duration: "1s", Phases: []Phase{{
		Name: "p", Window: "1s",
		Members: []MemberEvidence{{Name: "apiserver-3", Version: "v1.36.3", Role: "added", Requests: 4, Unauthorized: 2, Statuses: map[int]int{201: 2, 401: 2},
			AuthMessages: []MessageCount{{Message: "[invalid bearer token, invalid signature, no keys found]", Count: 2, Example: "E1129 line"}}}},
		Tenants: tally.Snapshot{Requests: 4, Unauthorized: 2, Pairs: []tally.Pair{{MintedBy: "apiserver-1", ServedBy: "apiserver-3", Requests: 2, Unauthorized: 2}}},
		Probes:  []Probe{{Name: "probe", Expect: 401, Status: 201, Duration: "3ms"}},
	}}}
	var b bytes.Buffer
	if err := ev.WriteTable(&b, report.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apiserver-3  v1.36.3  added", "50%", "apiserver-1 -> apiserver-3: 2 of 2", `2 x err="[invalid bearer token, invalid signature, no keys found]"`, "UNEXPECTED, wanted 401"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestRestartsFromStatus(t *testing.T) {
	s := lab.Status{
		ControllerManager: &lab.ProcStatus{PID: 7, Running: true, Restarts: 2, LastExit: "exit status 1"},
		Scheduler:         &lab.ProcStatus{PID: 8, Running: true},
	}
	got := restarts(s)
	if len(got) != 1 || got[0] != (Restart{Name: "kube-controller-manager", Restarts: 2, LastExit: "exit status 1"}) {
		t.Errorf("restarts = %+v, want the controller manager alone", got)
	}
	if got := restarts(lab.Status{}); got != nil {
		t.Errorf("restarts of a lab without controllers = %+v", got)
	}
}
