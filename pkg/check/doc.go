// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package check implements `credwatch check`: it finds every kube-apiserver behind a cluster
// endpoint, asks each one directly, and diagnoses which member rejects which tokens and why.
//
// The work is split in two. Fetch does all the I/O once and returns a Snapshot: the members with
// their discovery document, JWKS, version and metrics; the trust matrix (a token minted through
// member i, reviewed by member j); the public issuer's documents; pods, service accounts, legacy
// token secrets, leases and nodes. A failing fetch never aborts the run: it is recorded in the
// snapshot's Sources. Run then applies the registry of checks, pure functions of the snapshot,
// and skips (with the reason) every check whose inputs could not be fetched.
package check
