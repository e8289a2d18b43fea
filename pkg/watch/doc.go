// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package watch implements `credwatch watch`: package check run over time. Every interval it
// re-discovers the members and runs check's Fetch (members, trust matrix, public issuer) and the
// token checks on the snapshot; it keeps "held" tokens — one minted through each member when it
// first appears and renewed at 80 % of its lifetime, as the kubelet does — and has every member
// review them again each interval. It reduces each interval to a State and diffs consecutive
// states into Events (member joined/left/down/unready, trust broken/restored per signer→verifier
// pair, keys or issuer changed, auth failures rising, a finding raised/cleared).
//
// The diagnosis stays in package check; this package only adds time. Observers (the terminal
// view, JSON Lines, Prometheus metrics, Kubernetes Events, the HTML timeline) receive every
// state with its events.
package watch
