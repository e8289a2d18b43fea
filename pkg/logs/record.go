// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/logs/envelope"
	"github.com/credwatch/credwatch/pkg/logs/internal/quoted"
)

// Record is one log line unwrapped from its envelopes (kubectl prefix, CRI, Docker, syslog) down
// to the component's own message.
type Record struct {
	Time time.Time
	// PartialTime says Time was read from a timestamp without a year or a zone (klog's header,
	// a syslog date) and completed from the input's reference time: a guess, which --since
	// does not filter on.
	PartialTime bool
	Host        string
	Component   string
	Format      string // envelopes outermost first, joined by "+": "kubectl+klog", "cri+klog-json"
	Severity    string // I, W, E, F (klog) or the JSON level
	Source      string // klog file:line
	Msg         string // the message (klog msg, JSON msg, or the whole text)
	Err         string // the structured err value, if any
	Truncated   bool   // the line ended inside a quoted value or JSON document
	Logger      string // the structured logger name ("logger" of zap/logr JSON lines)
	Audit       *AuditInfo

	// body is a klog line's message not yet read (Msg, Err, Truncated and Audit unset) when
	// lazy: parseRecord leaves it to worker.classifyBody if lineHint.lazyBody.
	body string
	lazy bool
}

// AuditInfo is what an audit event or an access-log line says about a request.
type AuditInfo = envelope.AuditInfo

// lineHint is what the input and the worker tell parseRecord before a line is read: hints, not
// hooks (style guide §6). Nothing in it changes what parseRecord returns, only how fast.
type lineHint struct {
	host      string    // host from the file path or --host, may be empty
	component string    // component from the file path, may be empty
	ref       time.Time // reference time for year-less timestamps (file mtime or now)
	// scratch, if not nil, holds unescaped Docker lines: a worker's, valid until its block is
	// done (worker.line).
	scratch *quoted.Scratch
	// clock, if not nil, is a worker's, remembering the minute of its last timestamps.
	clock *minuteClock
	// lazyBody leaves a klog message unread (Record.body) when nothing before it in the line
	// bears on its classification: worker.classifyBody reads it, or remembers its answer.
	lazyBody bool
}

func (r *Record) addFormat(f string) {
	if r.Format == "" {
		r.Format = f
	} else {
		r.Format = joinFormat(r.Format, f)
	}
}

// commonFormats are the nested formats joinFormat returns without building a string.
var commonFormats = [...]string{"cri+klog", "docker+klog", "kubectl+klog", "kubectl+cri", "kubectl+cri+klog",
	"kubectl+docker", "kubectl+docker+klog", "cri+json", "docker+json", "kubectl+json", "syslog+klog",
	"kubectl+cri+json", "kubectl+docker+json", "compose+klog", "timestamp+klog", "compose+timestamp"}

// joinFormat is outer+"+"+inner.
func joinFormat(outer, inner string) string {
	for _, c := range commonFormats {
		if len(c) == len(outer)+1+len(inner) && c[len(outer)] == '+' && c[:len(outer)] == outer && c[len(outer)+1:] == inner {
			return c
		}
	}
	return outer + "+" + inner
}

// parseRecord unwraps line. It never fails: a line no format claims is plain text.
func parseRecord(line string, lc lineHint) Record {
	r := Record{Host: lc.host, Component: lc.component}
	if strings.IndexByte(line, 0x1b) >= 0 && strings.Contains(line, "\x1b[") {
		line = stripANSI(line)
	}
	var envTime time.Time
	partial := false // envTime came from a timestamp without a year or zone
	for depth := 0; depth < 6; depth++ {
		for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
			line = line[:len(line)-1] // strings.TrimRight(line, "\r\n") without building its set
		}
		if line == "" {
			break
		}
		if line[0] == '{' {
			inner, t, done := parseJSONLine(line, &r, lc.scratch, lc.clock)
			if !t.IsZero() && envTime.IsZero() {
				envTime = t
			}
			if done {
				r.finishTime(envTime, partial)
				return r
			}
			line = inner
			continue
		}
		// A klog header first: a line that has one has none of the envelopes below (no CRI or
		// syslog time, no lower-case pod name, no compose service before a bar; TestFastPaths).
		if h, ok := envelope.KlogHeader(line); ok {
			r.addFormat("klog")
			r.Severity = line[:1] // I, W, E or F (envelope.KlogHeader)
			r.Source = h.Source
			if envTime.IsZero() {
				envTime, partial = lc.clock.klog(h, lc.ref), true
			}
			if lc.lazyBody && r.Msg == "" && r.Err == "" && !r.Truncated && r.Logger == "" && r.Audit == nil {
				r.body, r.lazy = h.Body, true
			} else {
				readKlogBody(h.Body, &r)
			}
			r.finishTime(envTime, partial)
			return r
		}
		if rest, t, ok := parseCRI(line, lc.clock); ok {
			r.addFormat("cri")
			envTime = firstTime(envTime, t)
			line = rest
			continue
		}
		if rest, t, host, prog, ok := envelope.Syslog(line, lc.ref); ok {
			r.addFormat("syslog")
			if envTime.IsZero() {
				envTime, partial = t, envelope.Yearless(line)
			}
			r.Host = shortHost(host)
			r.Component = normalizeComponent(prog)
			line = rest
			continue
		}
		if rest, pod, container, ok := envelope.KubectlPrefix(line); ok {
			r.addFormat("kubectl")
			r.Component = normalizeComponent(container)
			r.Host = hostFromPod(pod, container)
			line = rest
			continue
		}
		if rest, service, ok := envelope.Compose(line); ok && r.Format == "" {
			r.addFormat("compose")
			r.Component = normalizeComponent(service)
			line = rest
			continue
		}
		if rest, t, ok := envelope.LeadingTime(line); ok && (r.Format == "" || r.Format == "compose") {
			r.addFormat("timestamp")
			envTime = firstTime(envTime, t)
			line = rest
			continue
		}
		if rest, prog, ok := envelope.ProgramKlog(line); ok && r.Format == "" {
			r.addFormat("syslog")
			r.Component = normalizeComponent(prog)
			line = rest
			continue
		}
		if rest, prog, ok := envelope.CutSyslog(line); ok && r.Format == "" {
			r.addFormat("syslog")
			r.Component = normalizeComponent(prog)
			line = rest
			continue
		}
		break
	}
	if r.Format == "" {
		r.Format = "plain"
	}
	r.Msg = line
	r.finishTime(envTime, partial)
	return r
}

// finishTime gives r the time of its envelopes, t (partial: without a year or zone), unless
// the component's own record had one.
func (r *Record) finishTime(t time.Time, partial bool) {
	if r.Time.IsZero() {
		r.Time, r.PartialTime = t, partial && !t.IsZero()
	}
	if !r.Time.IsZero() {
		r.Time = r.Time.UTC()
	}
}

func firstTime(have, t time.Time) time.Time {
	if have.IsZero() {
		return t
	}
	return have
}

// stripANSI removes terminal colour sequences (stern colours its prefixes).
func stripANSI(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// normalizeComponent maps container and program names to component names.
func normalizeComponent(name string) string {
	name = strings.TrimSpace(name)
	switch name {
	case "kube-apiserver", "apiserver":
		return "apiserver"
	case "kube-controller-manager", "controller-manager":
		return "controller-manager"
	case "kube-scheduler":
		return "scheduler"
	case "":
		return ""
	}
	return name
}

var staticPodPrefixes = [...]string{"kube-apiserver-", "kube-controller-manager-", "kube-scheduler-", "etcd-", "cloud-controller-manager-"}

// hostFromPod turns a static pod name (kube-apiserver-ip-10-0-1-2.eu-west-2.compute.internal)
// into the host (ip-10-0-1-2).
func hostFromPod(pod, container string) string {
	if n := len(container) + 1; container != "" && len(pod) > n && pod[n-1] == '-' && strings.HasPrefix(pod, container) {
		return shortHost(pod[n:])
	}
	for _, p := range staticPodPrefixes {
		if strings.HasPrefix(pod, p) && len(pod) > len(p) {
			return shortHost(pod[len(p):])
		}
	}
	return shortHost(pod)
}

// shortHost is a host's first DNS label, unless it is an IP address.
func shortHost(h string) string {
	if h == "" {
		return h
	}
	if isIPv4(h) || strings.Contains(h, ":") {
		return h
	}
	if i := strings.IndexByte(h, '.'); i > 0 {
		return h[:i]
	}
	return h
}

func isIPv4(s string) bool {
	dots := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			dots++
		case c < '0' || c > '9':
			return false
		}
	}
	return dots == 3
}

// ParseLine unwraps one line of a log that host's component writes (a followed file, say):
// envelopes, format, time and message, as the inputs of Analyze are read. ref is the reference
// time for year-less timestamps. It never fails: a line no format claims is plain text.
func ParseLine(line, host, component string, ref time.Time) Record {
	return parseRecord(line, lineHint{host: host, component: normalizeComponent(component), ref: ref})
}
