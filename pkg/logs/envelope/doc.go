// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package envelope holds the pure parsers of log envelopes, one file per format: bytes in, the
// parts out (the rest of the line, a time or its text, a host, a program, a JSON line's fields),
// no memo, no I/O, no state. pkg/logs tries them in order as it unwraps a line (parseRecord) and
// reads the times they leave as text with its own clock. The formats: CRI, syslog (and the cut
// syslog line), docker compose's prefix, a leading timestamp, klog headers and messages, kubectl
// and stern prefixes, JSON lines (Docker json-file, klog and zap JSON, audit events) and the API
// server's access log.
package envelope
