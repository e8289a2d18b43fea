// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package audit

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/golden"
	"github.com/credwatch/credwatch/pkg/report"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const (
	jti1 = "6d7f8a90-0000-4000-8000-000000000001"
	jti2 = "6d7f8a90-0000-4000-8000-000000000002"
)

func members() []MemberFile {
	return []MemberFile{
		{"cp-1", "testdata/members/cp-1/audit.log"},
		{"cp-2", "testdata/members/cp-2/audit.log"},
		{"cp-3", "testdata/members/cp-3/audit.log"},
	}
}

func TestTraceGolden(t *testing.T) {
	cases := []struct {
		name string
		ids  []string
	}{
		{"trace-pod-token", []string{"JTI=" + jti1}},
		{"trace-bare-and-unknown", []string{jti2, "JTI=6d7f8a90-0000-4000-8000-00000000ffff", jti2}},
		{"issued", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Trace(context.Background(), Files(members()), tc.ids)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []report.Format{report.Table, report.JSON, report.YAML} {
				var b bytes.Buffer
				if err := report.Print(&b, f, rep); err != nil {
					t.Fatal(err)
				}
				ext := map[report.Format]string{report.Table: "txt", report.JSON: "json", report.YAML: "yaml"}[f]
				golden.Check(t, filepath.Join("testdata", "golden", tc.name+"."+ext), b.Bytes(), *update)
			}
		})
	}
}

func TestTraceFacts(t *testing.T) {
	rep, err := Trace(context.Background(), Files(members()), []string{jti1})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Credentials[0]
	if len(c.Issued) != 1 || c.Issued[0].Member != "cp-1" || c.Issued[0].BoundObject == nil || c.Issued[0].BoundObject.Name != "web-0" ||
		c.Issued[0].Requester != "system:node:node-a" || c.Issued[0].ServiceAccount != "default/web" {
		t.Errorf("issued: %+v", c.Issued)
	}
	// cp-1: the watch's ResponseStarted is not counted, the get is; cp-2: a get and a 403.
	if len(c.Used) != 2 || c.Used[0].Member != "cp-1" || c.Used[0].Count != 1 || c.Used[1].Count != 2 || c.Used[1].Denied != 1 ||
		c.Used[0].Pod != "web-0" || c.Used[0].Node != "node-a" {
		t.Errorf("used: %+v", c.Used)
	}
	// cp-3: two 401s (a ResponseStarted not counted) from the pod's client; curl's is another client.
	if len(c.Rejected) != 1 || c.Rejected[0].Member != "cp-3" || c.Rejected[0].Count != 2 {
		t.Errorf("rejected: %+v", c.Rejected)
	}
}

// TestNoTokenPrinted: a RequestResponse-level TokenRequest event carries the token in
// responseObject.status.token; no output format prints any of it.
func TestNoTokenPrinted(t *testing.T) {
	raw, err := os.ReadFile("testdata/members/cp-2/audit.log")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(raw, []byte(`"token":"eyJ`))
	if i < 0 {
		t.Fatal("the fixture lost its token")
	}
	tok := string(raw[i+len(`"token":"`):])
	tok = tok[:strings.IndexByte(tok, '"')]
	parts := strings.Split(tok, ".")
	for _, ids := range [][]string{{jti2}, nil} {
		rep, err := Trace(context.Background(), Files(members()), ids)
		if err != nil {
			t.Fatal(err)
		}
		// The result itself must not hold it (encoded without the redaction writer), and no
		// output format prints it.
		raw, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		outs := map[string]string{"the result": string(raw)}
		for _, f := range []report.Format{report.Table, report.JSON, report.YAML} {
			var b bytes.Buffer
			if err := report.Print(&b, f, rep); err != nil {
				t.Fatal(err)
			}
			outs["-o "+string(f)] = b.String()
		}
		for what, out := range outs {
			for _, p := range parts {
				if strings.Contains(out, p) {
					t.Errorf("%s holds part of the token %q", what, p)
				}
			}
		}
	}
}

func TestTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"get","user":{},"responseStatus":{"code":401},"stageTimestamp":"2026-12-07T13:00:00.000000Z"}`
	cases := []struct {
		name, body string
		ids        []string
		want       string // error, "" for none
		problem    string
	}{
		{"klog.log", "I1207 13:00:00.000000       1 server.go:1] hello\n", nil, "klog.log: line 1: not an audit event (an audit log has one JSON event per line)", ""},
		{"other.json", `{"kind":"Pod","apiVersion":"v1"}` + "\n", nil, `other.json: line 1: not an audit event: kind "Pod", apiVersion "v1" (want Event, audit.k8s.io/v1)`, ""},
		{"broken.log", good + "\n" + `{"kind":"Event","apiVersion":"audit.k8s.io/v1","annotations":{"authentication.kubernetes.io/issued-credential-id":5}}` + "\n", nil, "broken.log: line 2: audit event: field annotations: want string", ""},
		{"time.log", `{"kind":"Event","apiVersion":"audit.k8s.io/v1","stageTimestamp":"yesterday"}` + "\n", nil, `time.log: line 1: audit event: a time that is not RFC 3339 (yesterday)`, ""},
		{"legacy.log", `2026-12-07T13:00:00.000000Z AUDIT: id="a" stage="ResponseComplete" ip="10.0.0.1" method="get" user="u"` + "\n", nil, "legacy.log: line 1: not an audit event (the legacy text format: start kube-apiserver with --audit-log-format=json)", ""},
		{"garbage.log", good + "\nnot json\n" + good + "\n", nil, "garbage.log: line 2: not an audit event", ""},
		{"cut.log", good + "\n" + good[:60], nil, "", "line 2: cut short (a log being written?): skipped"},
		{"empty.log", "\n\n", nil, "", "no audit events"},
		{"id.log", good + "\n", []string{"JTI="}, `credential id "JTI=": nothing after JTI=`, ""},
		{"tok.log", good + "\n", []string{"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"}, "that is a token, not its credential id", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := write(tc.name, tc.body)
			rep, err := Trace(context.Background(), Files([]MemberFile{{"m", p}}), tc.ids)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error of more than one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rep.Inputs[0].Problems, "; "); got != tc.problem {
				t.Errorf("problems %q, want %q", got, tc.problem)
			}
		})
	}
}

func TestTraceGzipAndLimits(t *testing.T) {
	raw, err := os.ReadFile("testdata/members/cp-2/audit.log")
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	src := []Source{{Member: "cp-2", Name: "cp-2.log.gz", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(z.Bytes())), nil }}}
	rep, err := TraceLimits(context.Background(), src, nil, Limits{Issued: 0, Clients: 1, MaxLine: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep.IssuedPerMember["cp-2"] != 1 || len(rep.Issued) != 0 || rep.IssuedNotListed != 1 {
		t.Errorf("issued %v listed %d not listed %d", rep.IssuedPerMember, len(rep.Issued), rep.IssuedNotListed)
	}
	// A line over MaxLine is skipped and said, not an error.
	rep, err = TraceLimits(context.Background(), src, []string{jti2}, Limits{Issued: 10, Clients: 10, MaxLine: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Inputs[0].Problems) == 0 || !strings.Contains(rep.Inputs[0].Problems[0], "line 1: longer than 1000 bytes") {
		t.Errorf("problems %q", rep.Inputs[0].Problems)
	}
}

func TestNormalizeID(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{jti1, "JTI=" + jti1, ""},
		{" JTI=" + jti1 + "\n", "JTI=" + jti1, ""},
		{"X509SHA256=0a01", "X509SHA256=0a01", ""},
		{"a=b", "JTI=a=b", ""},
		{"", "", "empty credential id"},
		{"JTI=a b", "", "no spaces"},
		{`JTI="x"`, "", "no spaces, quotes"},
	}
	for _, tc := range cases {
		got, err := NormalizeID(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("NormalizeID(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NormalizeID(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestEventList: an audit webhook's batch, stored as one EventList per line, traces as its events.
func TestEventList(t *testing.T) {
	raw, err := os.ReadFile("testdata/members/cp-3/audit.log")
	if err != nil {
		t.Fatal(err)
	}
	items := strings.Join(strings.Split(strings.TrimSpace(string(raw)), "\n"), ",")
	list := `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[` + items + `]}` + "\n"
	src := []Source{{Member: "cp-3", Name: "batch.log", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(list)), nil }}}
	rep, err := Trace(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.IssuedPerMember["cp-3"] != 1 || rep.Issued[0].ServiceAccount != "kube-system/coredns" {
		t.Errorf("issued %v %+v", rep.IssuedPerMember, rep.Issued)
	}
}
