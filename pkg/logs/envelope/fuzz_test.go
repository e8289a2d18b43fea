// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"strings"
	"testing"
	"time"
)

// FuzzEnvelopeFallbacks: compose, cut-syslog and program prefixes and leading timestamps only ever
// return the end of the line and a name taken from it.
func FuzzEnvelopeFallbacks(f *testing.F) {
	f.Add(`harbor-core      | 2021-05-21T05:04:58Z [ERROR] boom`)
	f.Add(`3 16:12:47 Ks-Kubernetes-Node01 k3s[911]: E0403 16:12:47.424793     911 authentication.go:63] "x"`)
	f.Fuzz(func(t *testing.T, line string) {
		if rest, name, ok := Compose(line); ok && (!strings.HasSuffix(line, rest) || !strings.HasPrefix(line, name)) {
			t.Fatalf("compose %q: %q %q", line, name, rest)
		}
		if rest, prog, ok := CutSyslog(line); ok && (!strings.HasSuffix(line, rest) || !strings.Contains(line, prog+"[")) {
			t.Fatalf("cut syslog %q: %q %q", line, prog, rest)
		}
		if rest, prog, ok := Program(line); ok && (!strings.HasSuffix(line, rest) || !strings.HasPrefix(line, prog+": ")) {
			t.Fatalf("program %q: %q %q", line, prog, rest)
		}
		if rest, _, ok := LeadingTime(line); ok && !strings.HasSuffix(line, rest) {
			t.Fatalf("leading time %q: %q", line, rest)
		}
	})
}

// FuzzAccessLog401: whatever it reads, an access-log line is a 401 and its fields come from it.
func FuzzAccessLog401(f *testing.F) {
	f.Add(`GET /api/v1/nodes?limit=500: (4.386595ms) 401 [metrics-server/v0.0.0 (linux/amd64) kubernetes/$Format 35.193.27.95:47328]`)
	f.Add(`"HTTP" verb="GET" URI="/api" latency="1ms" userAgent="kubectl/v1.36.3" audit-ID="a" srcIP="10.0.0.9:5000" resp=401`)
	f.Fuzz(func(t *testing.T, msg string) {
		a, ok := AccessLog401(msg)
		if !ok {
			return
		}
		if a.Code != 401 || !strings.Contains(msg, a.Verb) || !strings.Contains(msg, a.URI) {
			t.Fatalf("%q: %+v", msg, a)
		}
	})
}

func FuzzSyslog(f *testing.F) {
	f.Add(`Dec 16 09:25:01 ip-10-224-128-148 kubelet[1401]: I1216 09:25:01.699484    1401 scope.go:110] "RemoveContainer"`)
	f.Fuzz(func(t *testing.T, line string) {
		rest, _, host, prog, ok := Syslog(line, time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC))
		if ok && (!strings.HasSuffix(line, rest) || !strings.Contains(line, host) || !strings.Contains(line, prog)) {
			t.Fatalf("parts of %q do not come from it: %q %q %q", line, rest, host, prog)
		}
	})
}

func FuzzCRI(f *testing.F) {
	f.Add(`2026-11-29T08:00:04.918123456Z stderr F E1129 08:00:04.918000       1 authentication.go:75] "x"`)
	f.Fuzz(func(t *testing.T, line string) {
		rest, ts, ok := CRI(line)
		if ok && (!strings.HasSuffix(line, rest) || !strings.HasPrefix(line, ts)) {
			t.Fatalf("rest %q or time %q is not part of %q", rest, ts, line)
		}
	})
}

func FuzzKlog(f *testing.F) {
	f.Add(`E1213 15:29:38.634005       1 authentication.go:63] "Unable to authenticate the request" err="[invalid bearer token, service account token has been invalidated]"`)
	f.Fuzz(func(t *testing.T, line string) {
		h, ok := KlogHeader(line)
		if !ok {
			return
		}
		if !strings.HasSuffix(line, h.Body) {
			t.Fatalf("body %q is not the end of %q", h.Body, line)
		}
		// Unquoting only shortens: neither part is longer than the body.
		if msg, err, _ := KlogBody(h.Body); len(msg) > len(h.Body) || len(err) > len(h.Body) {
			t.Fatalf("msg %q, err %q are longer than the body %q", msg, err, h.Body)
		}
		_ = h.Time(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC))
	})
}
