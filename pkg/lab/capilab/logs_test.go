// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"slices"
	"testing"
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
