// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"strconv"
	"strings"
	"time"
)

var months = map[string]time.Month{"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6, "Jul": 7,
	"Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12}

// Syslog reads "Dec 16 09:25:01 host prog[pid]: msg" (journalctl, /var/log/syslog) and the
// ISO form "2022-12-16T09:25:01+0000 host prog[pid]: msg" (journalctl -o short-iso).
func Syslog(line string, ref time.Time) (rest string, t time.Time, host, prog string, ok bool) {
	var s string
	if len(line) > 16 && line[3] == ' ' && line[6] == ' ' && line[9] == ':' && line[12] == ':' && line[15] == ' ' {
		m, mok := months[line[:3]]
		day, derr := strconv.Atoi(strings.TrimSpace(line[4:6]))
		hh, e1 := strconv.Atoi(line[7:9])
		mm, e2 := strconv.Atoi(line[10:12])
		ss, e3 := strconv.Atoi(line[13:15])
		if !mok || derr != nil || e1 != nil || e2 != nil || e3 != nil {
			return "", t, "", "", false
		}
		t = WithYear(m, day, hh, mm, ss, 0, ref)
		s = line[16:]
	} else if len(line) > 20 && IsDigits(line[:4]) && line[4] == '-' && line[10] == 'T' {
		sp := strings.IndexByte(line, ' ')
		if sp < 0 {
			return "", t, "", "", false
		}
		var err error
		for _, layout := range []string{"2006-01-02T15:04:05-0700", time.RFC3339Nano, "2006-01-02T15:04:05.000000-0700"} {
			if t, err = time.Parse(layout, line[:sp]); err == nil {
				break
			}
		}
		if err != nil {
			return "", t, "", "", false
		}
		s = line[sp+1:]
	} else {
		return "", t, "", "", false
	}
	sp := strings.IndexByte(s, ' ')
	if sp <= 0 {
		return "", t, "", "", false
	}
	host = s[:sp]
	if host[0] == '[' { // "2021-09-08T08:45:40.239Z [ERROR] …": a level, not a host (hclog)
		return "", t, "", "", false
	}
	if host[len(host)-1] == ':' { // "2017-06-06T08:00:50.756Z Error: ENOENT: …": a message, not a host
		return "", t, "", "", false
	}
	s = s[sp+1:]
	colon := strings.Index(s, ": ")
	if colon <= 0 || strings.IndexByte(s[:colon], ' ') >= 0 {
		return "", t, "", "", false
	}
	prog = s[:colon]
	if i := strings.IndexByte(prog, '['); i > 0 {
		prog = prog[:i]
	}
	return s[colon+2:], t, host, prog, true
}

// Yearless reports a line Syslog reads whose date has no year and no zone ("Dec 16
// 09:25:01", not the ISO form).
func Yearless(line string) bool { return len(line) > 0 && !IsDigits(line[:1]) }

// WithYear builds a time from a year-less timestamp: the year of ref, or the one before when
// that would put the time more than a day after ref.
func WithYear(m time.Month, day, hh, mm, ss, ns int, ref time.Time) time.Time {
	if ref.IsZero() {
		ref = time.Now()
	}
	t := time.Date(ref.Year(), m, day, hh, mm, ss, ns, time.UTC)
	if t.After(ref.Add(24 * time.Hour)) {
		t = t.AddDate(-1, 0, 0)
	}
	return t
}

// CutSyslog finds "prog[pid]: " in a syslog line whose timestamp was cut when pasted
// ("3 16:12:47 node k3s[911]: E0403 …"): the program names the component.
func CutSyslog(line string) (rest, prog string, ok bool) {
	end := strings.Index(line, "]: ")
	if end <= 0 || end > 96 {
		return "", "", false
	}
	open := strings.LastIndexByte(line[:end], '[')
	if open <= 0 || !IsDigits(line[open+1:end]) {
		return "", "", false
	}
	start := strings.LastIndexByte(line[:open], ' ') + 1
	prog = line[start:open]
	if prog == "" || !isName(prog) {
		return "", "", false
	}
	return line[end+3:], prog, true
}

// Program reads "prog: <rest>", a syslog line cut down to its program name without a pid:
// the caller checks that the rest is a log line (pkg/logs: a klog header).
func Program(line string) (rest, prog string, ok bool) {
	end := strings.Index(line, ": ")
	if end <= 0 || end > 64 || !isName(line[:end]) {
		return "", "", false
	}
	return line[end+2:], line[:end], true
}
