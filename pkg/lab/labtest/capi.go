// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package labtest

import (
	"os"
	"testing"
)

// CAPITestsEnv, set to "all" (make test-capi sets it), runs every Cluster API lab test but the
// long ones; "long" (make test-capi-long) runs those too. make test leaves it unset: with the
// Cluster API binaries present it runs only the v1.8.1 capi-roll, so that a checkout that has
// them keeps make test within its 30-minute budget.
const CAPITestsEnv = "CREDWATCH_CAPI_TESTS"

// CAPIAll skips t unless CREDWATCH_CAPI_TESTS=all: a Cluster API lab test that make test-capi
// runs and make test does not.
func CAPIAll(t testing.TB) {
	t.Helper()
	if v := os.Getenv(CAPITestsEnv); v != "all" && v != "long" {
		t.Skipf("Cluster API lab test: make test-capi runs it (%s=all)", CAPITestsEnv)
	}
}

// CAPILong skips t unless CREDWATCH_CAPI_TESTS=long: a Cluster API lab test too long for make
// test-capi's 45 minutes (a three-machine control plane), which make test-capi-long runs.
func CAPILong(t testing.TB) {
	t.Helper()
	if os.Getenv(CAPITestsEnv) != "long" {
		t.Skipf("long Cluster API lab test: make test-capi-long runs it (%s=long)", CAPITestsEnv)
	}
}
