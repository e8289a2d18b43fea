// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build !unix

package userfiletest

import "testing"

// MkFIFO skips the test: there are no FIFOs to make here.
func MkFIFO(t testing.TB, _ string) {
	t.Helper()
	t.Skip("no FIFOs on this system")
}
