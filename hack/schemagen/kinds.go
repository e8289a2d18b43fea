// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/explain"
	"github.com/credwatch/credwatch/internal/cmd/keys/diff"
	"github.com/credwatch/credwatch/internal/cmd/keys/id"
	"github.com/credwatch/credwatch/internal/cmd/token/verify"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/fleet"
	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/logs/audit"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/token"
	"github.com/credwatch/credwatch/pkg/watch"
)

// kind is one document credwatch prints with -o json, and the Go type that encodes it.
type kind struct {
	name    string // the document's kind, and its schema's file name
	command string // what prints it
	value   any    // a value of the Go type -o json encodes
	// line: the document is one line of a JSON Lines stream, with no apiVersion or kind.
	line bool
}

// kinds are the documents of docs/json.md, in its order. keys jwks is not here: it prints the
// JWKS of RFC 7517 as kube-apiserver serves it, not a credwatch document.
func kinds() []kind {
	return []kind{
		{name: "TokenInspection", command: "credwatch token inspect", value: token.Inspection{}},
		{name: "TokenVerification", command: "credwatch token verify", value: verify.Result{}},
		{name: "KeyList", command: "credwatch keys id", value: id.KeyList{}},
		{name: "KeyDiff", command: "credwatch keys diff", value: diff.KeyDiff{}},
		{name: "LogReport", command: "credwatch logs", value: logs.Report{}},
		{name: "CredentialTrace", command: "credwatch logs --trace-credential", value: audit.Report{}},
		{name: "WatchEvent", command: "credwatch watch", value: watch.Event{}, line: true},
		{name: "CheckReport", command: "credwatch check", value: check.Report{}},
		{name: "FleetCheckReport", command: "credwatch check --all-contexts", value: fleet.Report{}},
		{name: "PreflightReport", command: "credwatch preflight", value: preflight.Report{}},
		{name: "CloudReport", command: "credwatch cloud", value: cloud.Report{}},
		{name: "CatalogueEntry", command: "credwatch explain ID", value: explain.Document{}},
		{name: "Catalogue", command: "credwatch explain", value: catalogue.Catalogue{}},
		{name: "Version", command: "credwatch version", value: cli.BuildInfo{}},
	}
}
