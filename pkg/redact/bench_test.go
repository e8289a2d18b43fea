package redact

import (
	"io"
	"strings"
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
