// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"slices"
	"testing"
	"time"
)

func TestAuthLines(t *testing.T) {
	data := []byte(`2026-12-04T04:05:15.100000000Z stderr F I1204 04:05:15.100000       1 serving.go:380] Generated self-signed cert
2026-12-04T04:06:01.200000000Z stderr F E1204 04:06:01.200000       1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, service account token has been invalidated]"
2026-12-04T04:06:02.300000000Z stderr P E1204 04:06:02.300000       1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, context deadline exceeded]"
not a CRI line "Unable to authenticate the request"
`)
	want := []string{
		`E1204 04:06:01.200000       1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, service account token has been invalidated]"`,
		`E1204 04:06:02.300000       1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, context deadline exceeded]"`,
		`not a CRI line "Unable to authenticate the request"`,
	}
	if got := authLines(data); !slices.Equal(got, want) {
		t.Errorf("authLines =\n%q\nwant\n%q", got, want)
	}
}

func TestRunOf(t *testing.T) {
	data := []byte("2026-12-04T04:05:15.100000000Z stderr F I1204 first\nnot a CRI line\n2026-12-04T04:05:39.500000000Z stderr F I1204 last\n")
	r, ok := runOf(data)
	if !ok || r.First.Format(time.RFC3339Nano) != "2026-12-04T04:05:15.1Z" || r.Last.Sub(r.First) != 24400*time.Millisecond {
		t.Errorf("runOf = %+v, %v", r, ok)
	}
	if _, ok := runOf([]byte("garbage\n")); ok {
		t.Error("runOf found a run in a file without CRI lines")
	}
	if got := runName("/d/kube-system_kube-apiserver-m_0123456789abcdef/kube-apiserver/1.log"); got != "01234567/1.log" {
		t.Errorf("runName = %q", got)
	}
}
