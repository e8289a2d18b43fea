// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"strconv"
	"strings"
)

// AuditInfo is what an audit event or an access-log line says about a request.
type AuditInfo struct {
	Code      int      `json:"code"`
	User      string   `json:"user,omitempty"`
	UserAgent string   `json:"userAgent,omitempty"`
	SourceIPs []string `json:"sourceIPs,omitempty"`
	Verb      string   `json:"verb,omitempty"`
	URI       string   `json:"requestURI,omitempty"`
	AuditID   string   `json:"auditID,omitempty"`
}

// AccessLog401 reads an API server access-log line that answered 401, in any era's form:
// httplog's structured `"HTTP" verb="GET" URI="…" … userAgent="…" … srcIP="…" resp=401`,
// and the older `GET /path: (4.3ms) 401 [user-agent 10.0.0.1:47328]` (wrap.go, handlers.go;
// before 1.8 the agent is bracketed too, `[[agent] ip]`, and the oldest have no client at all).
func AccessLog401(msg string) (*AuditInfo, bool) {
	if strings.HasPrefix(msg, "HTTP") {
		return nil, false
	}
	if strings.HasPrefix(msg, `"HTTP"`) && strings.Contains(msg, "resp=401") {
		a := &AuditInfo{Code: 401}
		fields := msg[len(`"HTTP"`):]
		a.Verb = kvField(fields, "verb")
		a.URI = kvField(fields, "URI")
		a.UserAgent = kvField(fields, "userAgent")
		a.AuditID = kvField(fields, "audit-ID")
		if ip := kvField(fields, "srcIP"); ip != "" {
			a.SourceIPs = []string{ip}
		}
		return a, true
	}
	sp := strings.IndexByte(msg, ' ')
	if sp <= 0 || !isVerb(msg[:sp]) {
		return nil, false
	}
	i := strings.Index(msg, ") 401")
	if i < 0 || (len(msg) > i+5 && msg[i+5] != ' ') {
		return nil, false
	}
	c := strings.Index(msg, ": (")
	if c <= sp || c > i {
		return nil, false
	}
	a := &AuditInfo{Code: 401, Verb: msg[:sp], URI: msg[sp+1 : c]}
	if rest := msg[i+5:]; strings.HasPrefix(rest, " [") && strings.HasSuffix(rest, "]") {
		client := rest[2 : len(rest)-1]
		if k := strings.LastIndexByte(client, ' '); k > 0 {
			a.UserAgent, a.SourceIPs = client[:k], []string{client[k+1:]}
		} else {
			a.UserAgent = client
		}
		if ua := a.UserAgent; len(ua) > 1 && ua[0] == '[' && ua[len(ua)-1] == ']' {
			a.UserAgent = ua[1 : len(ua)-1]
		}
	}
	return a, true
}

func isVerb(s string) bool {
	switch s {
	case "GET", "POST", "PUT", "PATCH", "DELETE", "LIST", "WATCH", "HEAD", "OPTIONS":
		return true
	}
	return false
}

// kvField reads key=value or key="value" from klog's structured fields.
func kvField(s, key string) string {
	i := strings.Index(s, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := s[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		if q, err := strconv.QuotedPrefix(v); err == nil {
			if u, err := strconv.Unquote(q); err == nil {
				return u
			}
		}
		return ""
	}
	if sp := strings.IndexByte(v, ' '); sp >= 0 {
		return v[:sp]
	}
	return v
}
