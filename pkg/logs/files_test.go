// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"testing"
)

func TestNamedLikeLog(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"apiserver-1.log": true, "kube-apiserver.log.1": true, "kube-apiserver.log.2.gz": true, "0.log.20261202-140305": true,
		"0.log.20261202-140305.gz": true, "kubelet.log-20261202": true, "kubelet-journal.txt": true, "audit.jsonl": true,
		"abc-json.log": true, "messages": false, "evidence.json": false, "report.html": false, "results.sarif": false,
		"ca.crt": false, "10.0.0.5": false,
	} {
		if got := namedLikeLog(name); got != want {
			t.Errorf("namedLikeLog(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestParseGlob(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "[", "a[b"} {
		if _, err := ParseGlob(bad); err == nil {
			t.Errorf("ParseGlob(%q) accepted", bad)
		}
	}
}

// FuzzFileSniff: telling a file's start apart (credwatch's own output, log lines, a log's name,
// a glob) never panics on any bytes, and a start of credwatch's JSON document is always its own
// output, whatever follows.
func FuzzFileSniff(f *testing.F) {
	f.Add([]byte("E1202 14:03:05.123456 1 a.go:1] x\n"), "kube-apiserver.log.2.gz", "*.log")
	f.Add([]byte(`{"time":"2026-11-30T09:31:19Z","interval":3,"kind":"x"}`), "messages-20261202", "sub/[a-c]*")
	f.Add([]byte("\x1f\x8b\x00\x00"), ".gz", "[")
	f.Fuzz(func(t *testing.T, head []byte, name, pattern string) {
		_ = ownOutput(head)
		_ = hasLogLines(head)
		_ = namedLikeLog(name)
		if g, err := ParseGlob(pattern); err == nil {
			_ = g.match(name)
		}
		doc := append([]byte("{\n  \"apiVersion\": \"credwatch.dev/v1alpha1\",\n"), head...)
		if len(doc) > sniffBytes {
			doc = doc[:sniffBytes]
		}
		if ownOutput(doc) == "" {
			t.Errorf("a credwatch document is not recognised: %q", doc)
		}
	})
}
