// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
)

// Kind names what changed. The values are a contract (docs/json.md).
type Kind string

// Event kinds.
const (
	MemberJoined     Kind = "member-joined"
	MemberLeft       Kind = "member-left"
	MemberDown       Kind = "member-down"
	MemberUp         Kind = "member-up"
	MemberUnready    Kind = "member-unready"
	MemberReady      Kind = "member-ready"
	KeysChanged      Kind = "keys-changed"
	IssuerChanged    Kind = "issuer-changed"
	VersionChanged   Kind = "version-changed"
	TrustBroken      Kind = "trust-broken"
	TrustRestored    Kind = "trust-restored"
	HeldBroken       Kind = "held-token-broken"
	HeldRestored     Kind = "held-token-restored"
	AuthFailures     Kind = "auth-failures-rising"
	FindingRaised    Kind = "finding-raised"
	FindingCleared   Kind = "finding-cleared"
	LogCauseAppeared Kind = "log-cause-appeared"
	LogCauseCleared  Kind = "log-cause-cleared"
	LogFileBehind    Kind = "log-file-behind"
	LogFileCaughtUp  Kind = "log-file-caught-up"
)

// Event is one state change, written as one JSON line with -o json.
type Event struct {
	Time     time.Time          `json:"time"`
	Interval int                `json:"interval"`
	Kind     Kind               `json:"kind"`
	Member   string             `json:"member"`
	Severity catalogue.Severity `json:"severity"`
	// ID is the catalogue ID: the finding's, or the cause of a rejected token.
	ID string `json:"id,omitempty"`
	// Signer and Verifier name a trust cell: the token minted through (or held from) Signer,
	// reviewed by Verifier (= Member). Token names a --token-file token instead of a signer.
	Signer   string             `json:"signer,omitempty"`
	Verifier string             `json:"verifier,omitempty"`
	Token    string             `json:"token,omitempty"`
	Message  string             `json:"message"`
	Evidence []finding.Evidence `json:"evidence,omitempty"`
}
