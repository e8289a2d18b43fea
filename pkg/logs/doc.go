// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package logs reads control-plane logs in any format the field produces (klog text and JSON,
// kubectl/stern prefixes, journald/syslog, Docker json-file, CRI, audit events, client output),
// finds every authentication-related line, names its cause from the shared catalogue, aggregates
// per host, component, cause and minute, collects the context events that explain a roll, and
// ranks hypotheses for a verdict.
//
// Analyze is the only place that knows the order of the stages, each in a package of its own:
//
//	inputs (FileInputs, ClusterInputs)
//	→ blocks of whole lines and the lines worth parsing (internal/scan: the SIMD gate, mmap)
//	→ records (parseRecord: the envelopes, outermost first, each parsed by package envelope)
//	→ causes (Classify with cause.Classifier, the one classifier over the catalogue)
//	→ aggregate (internal/agg: per host, component and cause, with bounded evidence)
//	→ report and verdict (buildReport, verdict)
//
// and package render writes the report (table, SARIF, HTML). Reading is streaming and bounded:
// inputs are cut into blocks that a pool of workers scans for catalogue anchors; only lines that
// carry one are parsed and classified. Memory does not grow with the input size.
//
// Package audit (pkg/logs/audit) is the other reader of these inputs: it traces service-account
// credential ids (JTI=<jti>) through the members' kube-apiserver audit logs, each input's member
// named as its host is here (FileInputs, SetHosts).
package logs
