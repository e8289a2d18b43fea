// Package logs reads control-plane logs in any format the field produces (klog text and JSON,
// kubectl/stern prefixes, journald/syslog, Docker json-file, CRI, audit events, client output),
// finds every authentication-related line, names its cause from the shared catalogue, aggregates
// per host, component, cause and minute, collects the context events that explain a roll, and
// ranks hypotheses for a verdict.
//
// Reading is streaming and bounded: inputs are cut into blocks that a pool of workers scans for
// catalogue anchors; only lines that carry one are parsed and classified. Memory does not grow
// with the input size.
package logs
