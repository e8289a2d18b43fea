// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package render writes a finished logs.Report for people and pipelines: the table (-o
// table|wide), the SARIF log (-o sarif) and the self-contained HTML page with its per-minute
// chart (--html). JSON and YAML are the report's own encoding (logs.Report.JSONMembers). It
// reads a report and knows nothing of how it was made: classifying a line links none of it.
package render
