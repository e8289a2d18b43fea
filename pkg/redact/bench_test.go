// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// benchDoc is about 1 MB of printed report: JSON findings that mention tokens, secrets,
// authentication and API versions on every line, and a token every 50 lines.
var benchDoc = func() string {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString(`  {"apiVersion": "credwatch.io/v1", "id": "token-review-failed", "message": "TokenReview of the probe token: authentication failed, Secret kube-system/vsphere-cloud-secret: read", "member": "apiserver-1.k8s.local:6443"}` + "\n")
		if i%50 == 0 {
			b.WriteString(`  {"token": "` + jws + `"}` + "\n")
		}
	}
	return b.String()
}()

func BenchmarkText(b *testing.B) {
	b.SetBytes(int64(len(benchDoc)))
	for i := 0; i < b.N; i++ {
		Text(benchDoc)
	}
}

func BenchmarkWriter(b *testing.B) {
	k := &Known{}
	k.Add("not-a-real-token")
	w := NewWriter(io.Discard, k)
	b.SetBytes(int64(len(benchDoc)))
	for i := 0; i < b.N; i++ {
		_, _ = io.WriteString(w, benchDoc)
	}
}

// reportDoc is about 2 MB of credwatch's own reports (the logs and check goldens, -o json and
// table, repeated), as the logs command prints a dense incident through a Writer: "token",
// "auth" and "apiVersion" on most lines, and no secret.
var reportDoc = sync.OnceValue(func() string {
	var parts []string
	for _, p := range []string{"../logs/testdata/golden/*", "../check/testdata/*.json", "../check/testdata/*.table"} {
		files, _ := filepath.Glob(p)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				panic(err)
			}
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 {
		panic("no report goldens")
	}
	var b strings.Builder
	for i := 0; b.Len() < 2<<20; i++ {
		b.WriteString(parts[i%len(parts)])
	}
	return b.String()
})

// proseDoc is about 1 MB of plain prose that mentions a token (and auth, an API) on every line.
var proseDoc = func() string {
	lines := []string{
		"the probe token was rejected by apiserver-2: token signed with a key this API server does not have\n",
		"authentication failed for the service account token of kube-system/credwatch, 3 times since 12:00\n",
		"API server apiserver-1 accepts the token; the bound token's audience is https://kubernetes.default.svc\n",
		"token expired 5m ago: rotate the projected token, or restart the pod that holds the stale token\n",
	}
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString(lines[i%len(lines)])
	}
	return b.String()
}()

func BenchmarkReport(b *testing.B) { benchText(b, reportDoc()) }

func BenchmarkProse(b *testing.B) { benchText(b, proseDoc) }

func benchText(b *testing.B, doc string) {
	if Text(doc) != doc {
		b.Fatal("the clean document changed")
	}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		Text(doc)
	}
}

// BenchmarkWriterReport is the Writer over a 2 MB report written in 32 KiB pieces, as
// json.Encoder and the table printer hand it over.
func BenchmarkWriterReport(b *testing.B) {
	doc := []byte(reportDoc())
	w := NewWriter(io.Discard, nil)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		for p := doc; len(p) > 0; {
			n := min(len(p), 32<<10)
			_, _ = w.Write(p[:n])
			p = p[n:]
		}
		_ = w.Flush()
	}
}
