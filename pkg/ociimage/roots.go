// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package ociimage

import (
	"bytes"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// CABundlePath is where the image's CA bundle goes: the first file Go's crypto/x509 reads on Linux.
const CABundlePath = "etc/ssl/certs/ca-certificates.crt"

// CABundle returns the Mozilla (NSS) root certificates as PEM, from golang.org/x/crypto/x509roots/fallback,
// a Go module pinned in go.sum: the same module version always gives the same bytes, unlike the
// build host's /etc/ssl/certs. Roots that carry a constraint a PEM file cannot express (NSS's
// "distrust after" date) are left out, so the file never trusts more than Go's own fallback does.
// It returns the bundle and how many roots it holds.
func CABundle() ([]byte, int, error) {
	var buf bytes.Buffer
	n := 0
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, 0, fmt.Errorf("CA bundle: %w", err)
		}
		n++
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("CA bundle: golang.org/x/crypto/x509roots/fallback holds no unconstrained root")
	}
	return buf.Bytes(), n, nil
}
