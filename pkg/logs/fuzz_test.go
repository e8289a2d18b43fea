// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
	"github.com/credwatch/credwatch/pkg/logs/envelope"
)

// Seed corpora live in testdata/fuzz/FuzzXxx/; `make fuzz` (hack/fuzz.sh) runs each target.

var fuzzRef = time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)

func FuzzKubectlPrefix(f *testing.F) {
	f.Add(`kube-apiserver-ip-10-0-252-80.eu-west-2.compute.internal kube-apiserver E1215 08:16:43.535948       1 authentication.go:63] "x"`)
	f.Add(`[pod/kube-apiserver-cp-2/kube-apiserver] E1215 08:16:43.535948       1 authentication.go:63] "x"`)
	f.Fuzz(func(t *testing.T, line string) {
		rest, pod, container, ok := envelope.KubectlPrefix(line)
		if ok && (!strings.HasSuffix(line, rest) || !strings.Contains(line, pod) || !strings.Contains(line, container)) {
			t.Fatalf("parts of %q do not come from it", line)
		}
		_ = hostFromPod(pod, container)
	})
}

func FuzzJSONLine(f *testing.F) {
	f.Add(`{"log":"E1129 08:00:01.017000       1 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"\n","stream":"stderr","time":"2026-11-29T08:00:01.017Z"}`)
	f.Add(`{"ts":1765786603.535948,"msg":"Unable to authenticate the request","err":"[invalid bearer token, service account token has expired]"}`)
	f.Add(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","responseStatus":{"code":401},"userAgent":"x","sourceIPs":["10.0.0.1"]}`)
	f.Fuzz(func(t *testing.T, line string) {
		var r Record
		inner, _, done := parseJSONLine(line, &r, nil, nil)
		if !done && len(inner) > len(line) {
			t.Fatalf("inner line %d bytes from a %d-byte line", len(inner), len(line))
		}
	})
}

// FuzzLine runs a whole line through every format and the classifier.
func FuzzLine(f *testing.F) {
	for _, l := range benchLines {
		f.Add(l)
	}
	cl := cause.NewClassifier(catalogue.Default())
	f.Fuzz(func(t *testing.T, line string) {
		ev, ok := Classify(cl, parseRecord(line, lineHint{host: "h", ref: fuzzRef}))
		if ok && ev.Cause == "" {
			t.Fatalf("classified without a cause: %+v", ev)
		}
		_ = evidenceLine(line)
	})
}

// FuzzContinuation: the continuation of a token broken at the end of prev is a part of line,
// at the offset given, and the evidence shown of line never panics.
func FuzzContinuation(f *testing.F) {
	f.Add(`{"log":"Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIi","stream":"stderr"}`, `{"log":"OiJ4In0.c2lnbmF0dXJl err=\"x\"\n","stream":"stderr"}`)
	f.Add("2026-11-29T08:16:43.535948123Z stderr P Bearer eyJhbGciOiJSUzI1NiJ9.eyJz", "2026-11-29T08:16:43.535948123Z stderr F dWIiOiJ4In0.c2ln rest")
	f.Add("Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln", "bmF0dXJl rest")
	f.Fuzz(func(t *testing.T, prev, line string) {
		cont, at := Continuation(prev, line)
		if cont != "" && (at < 0 || at+len(cont) > len(line) || line[at:at+len(cont)] != cont) {
			t.Fatalf("continuation %q at %d is not in %q", cont, at, line)
		}
		if out := EvidenceLine(prev, line, maxEvidenceLine); len(out) > maxEvidenceLine+len("…") {
			t.Fatalf("evidence of %d bytes", len(out))
		}
		_, _ = dockerPartial(prev)
	})
}
