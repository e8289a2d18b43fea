// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const auditMembers = "../../../pkg/logs/audit/testdata/members"

func TestTraceCredential(t *testing.T) {
	t.Parallel()
	klog := filepath.Join(t.TempDir(), "cp-9.log")
	if err := os.WriteFile(klog, []byte("I1207 13:00:00.000000       1 server.go:1] hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(t.TempDir(), "bundle")
	for name, body := range map[string]string{"cp-1/kube-apiserver.log": "I1207 13:00:00.000000       1 server.go:1] hello\n", "cp-1/audit.log": ""} {
		p := filepath.Join(bundle, name)
		if body == "" {
			raw, err := os.ReadFile(auditMembers + "/cp-1/audit.log")
			if err != nil {
				t.Fatal(err)
			}
			body = string(raw)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	klogOnly := filepath.Join(t.TempDir(), "cp-2")
	if err := os.MkdirAll(klogOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(klogOnly, "kube-apiserver.log"), []byte("I1207 13:00:00.000000       1 server.go:1] hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		out  []string // substrings of stdout
		err  string   // substring of stderr
	}{
		{"trace", []string{"--trace-credential", "6d7f8a90-0000-4000-8000-000000000001", auditMembers}, 0,
			[]string{"issued by cp-1 at 2026-12-07T13:00:00Z for default/web, bound to pod web-0", "cp-3    2"}, ""},
		{"member from --host", []string{"--trace-credential", "JTI=6d7f8a90-0000-4000-8000-000000000002", "--host", auditMembers + "/cp-2=east", "-o", "json", auditMembers + "/cp-2/audit.log"}, 0,
			[]string{`"member": "east"`, `"expiresAt": "2026-12-07T13:59:00Z"`}, ""},
		{"issued", []string{"--issued-credentials", "-o", "yaml", auditMembers}, 0, []string{"issuedPerMember:", "cp-3: 1"}, ""},
		{"not audit", []string{"--issued-credentials", klog}, 2, nil, "cp-9.log: line 1: not an audit event"},
		{"other logs in a directory", []string{"--issued-credentials", bundle}, 0, []string{"kube-apiserver.log (not an audit log: skipped)", "cp-1    2026-12-07T13:00:00Z"}, "line 1: not JSON: not an audit log, skipped"},
		{"no audit log in a directory", []string{"--issued-credentials", klogOnly}, 2, nil, "no audit log among the inputs"},
		{"bad id", []string{"--trace-credential", "JTI=", auditMembers}, 2, nil, `logs --trace-credential: credential id "JTI=": nothing after JTI=`},
		{"a token for an id", []string{"--trace-credential", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl", auditMembers}, 2, nil, "that is a token, not its credential id"},
		{"both", []string{"--trace-credential", "x", "--issued-credentials", auditMembers}, 2, nil, "give one"},
		{"from cluster", []string{"--trace-credential", "x", "--from-cluster"}, 2, nil, "--from-cluster does not apply"},
		{"sarif", []string{"--trace-credential", "x", "-o", "sarif", auditMembers}, 2, nil, "want table, json or yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.code, errOut)
			}
			for _, s := range tc.out {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if tc.err != "" && (!strings.Contains(errOut, tc.err) || strings.Count(strings.TrimSpace(errOut), "\n") > 0) {
				t.Errorf("stderr %q, want one line with %q", errOut, tc.err)
			}
			if strings.Contains(out+errOut, "U0lHTkFUVVJF") || strings.Contains(errOut, "eyJzdWIi") {
				t.Errorf("the TokenRequest's token is printed:\n%s", out)
			}
		})
	}
}
