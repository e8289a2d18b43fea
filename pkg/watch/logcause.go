// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/logs/cause"
)

// LogFile is a member's log file to follow (--log-file HOST=PATH): Host is the member's name as
// watch reports it (apiserver-2, or the node name of a static pod).
type LogFile struct {
	Host string
	Path string
}

// ParseLogFile reads HOST=PATH.
func ParseLogFile(s string) (LogFile, error) {
	host, path, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(host) == "" || path == "" {
		return LogFile{}, fmt.Errorf("%q: want HOST=PATH", s)
	}
	return LogFile{Host: strings.TrimSpace(host), Path: path}, nil
}

// LogCause is a cause the logs classifier found in a member's own log lines: active from the
// first line naming it until no line has named it for the quiet period.
type LogCause struct {
	Member string    `json:"member"`
	ID     string    `json:"id"` // the catalogue ID
	Since  time.Time `json:"since"`
	Last   time.Time `json:"last"`
	Lines  int       `json:"lines"` // lines naming it since it appeared
	// Line is the last line naming it, secrets taken out and clipped.
	Line string `json:"line"`
	// Source is the file (or pod/container) the line was read from.
	Source string `json:"source"`
}

// LogTotal is how many lines of a member's own log named a cause since watch began: unlike a
// LogCause's, the count never restarts (it is the counter credwatch_auth_failures_total).
type LogTotal struct {
	Member string `json:"member"`
	ID     string `json:"id"` // the catalogue ID
	Lines  int    `json:"lines"`
}

// LogBehind is a followed log file that grows faster than watch reads it (at most 8 MiB an
// interval): the causes its newer lines name come late, and a rotation may lose them.
type LogBehind struct {
	Member string `json:"member"`
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"` // left unread at the end of the interval
}

// maxCauseLine clips the line kept as evidence.
const maxCauseLine = 400

// logCauses follows the members' log files and keeps the causes their lines name. It is used
// from the loop goroutine only.
type logCauses struct {
	files  []LogFile
	tails  []*tailer
	cl     *cause.Classifier
	quiet  time.Duration
	active map[string]*LogCause // by member and ID
	totals map[string]*LogTotal // by member and ID, never dropped
	errs   map[string]string    // the last error following each file ("log-file PATH"), or the pods ("pod-logs")
	// last is the last line read from each source: the line before the next one read, whose
	// start may finish a token broken at its end (logs.EvidenceLine).
	last map[string]string
}

func newLogCauses(files []LogFile, quiet time.Duration) *logCauses {
	lc := &logCauses{files: files, cl: cause.NewClassifier(catalogue.Default()), quiet: quiet,
		active: map[string]*LogCause{}, totals: map[string]*LogTotal{}, errs: map[string]string{}, last: map[string]string{}}
	for _, f := range files {
		lc.tails = append(lc.tails, newTailer(f.Path))
	}
	return lc
}

// poll reads every file's new lines, classifies them and the pods' lines, and returns the causes
// active at now.
func (lc *logCauses) poll(now time.Time, pods []podLines) []LogCause {
	for i, t := range lc.tails {
		lines, err := t.poll()
		if err != nil {
			lc.errs["log-file "+t.path] = err.Error()
		} else {
			delete(lc.errs, "log-file "+t.path)
		}
		lc.feed(lc.files[i].Host, t.path, lines, now)
	}
	for _, p := range pods {
		lc.feed(p.member, p.source, p.lines, now)
	}
	return lc.current(now)
}

// feed classifies lines of host's log read from source at now.
func (lc *logCauses) feed(host, source string, lines []string, now time.Time) {
	if len(lines) == 0 {
		return
	}
	prev := lc.last[source]
	defer func() { lc.last[source] = lines[len(lines)-1] }()
	for i, line := range lines {
		if i > 0 {
			prev = lines[i-1]
		}
		ev, ok := logs.Classify(lc.cl, logs.ParseLine(line, host, "kube-apiserver", now))
		if !ok || ev.Kind != "cause" {
			continue
		}
		k := host + "\x00" + ev.Cause
		c := lc.active[k]
		if c == nil {
			c = &LogCause{Member: host, ID: ev.Cause, Since: now}
			lc.active[k] = c
		}
		c.Last, c.Source = now, source
		c.Lines++
		n := lc.totals[k]
		if n == nil {
			n = &LogTotal{Member: host, ID: ev.Cause}
			lc.totals[k] = n
		}
		n.Lines++
		c.Line = logs.EvidenceLine(prev, line, maxCauseLine)
	}
}

// current drops the causes quiet for the quiet period and returns the others, sorted.
func (lc *logCauses) current(now time.Time) []LogCause {
	out := make([]LogCause, 0, len(lc.active))
	for k, c := range lc.active {
		if now.Sub(c.Last) >= lc.quiet {
			delete(lc.active, k)
			continue
		}
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b LogCause) int {
		return cmp.Or(strings.Compare(a.Member, b.Member), strings.Compare(a.ID, b.ID))
	})
	return out
}

// counts returns the totals, sorted.
func (lc *logCauses) counts() []LogTotal {
	out := make([]LogTotal, 0, len(lc.totals))
	for _, n := range lc.totals {
		out = append(out, *n)
	}
	slices.SortFunc(out, func(a, b LogTotal) int {
		return cmp.Or(strings.Compare(a.Member, b.Member), strings.Compare(a.ID, b.ID))
	})
	return out
}

// behind lists the files the last poll left unread, in the order of the flags.
func (lc *logCauses) behind() []LogBehind { return behindOf(lc.files, lc.tails) }

func (lc *logCauses) close() { closeAll(lc.tails) }

// behindOf lists the files of tails (following files, in order) the last poll left unread.
func behindOf(files []LogFile, tails []*tailer) []LogBehind {
	var out []LogBehind
	for i, t := range tails {
		if t.behind > 0 {
			out = append(out, LogBehind{Member: files[i].Host, Path: t.path, Bytes: t.behind})
		}
	}
	return out
}

// closeAll releases the tails' open files.
func closeAll(tails []*tailer) {
	for _, t := range tails {
		t.close()
	}
}
