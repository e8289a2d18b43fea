package logs

import (
	"strconv"
	"strings"
	"time"
)

// parseCompose reads docker compose's prefix: "<service>   | <line>".
func parseCompose(line string) (rest, service string, ok bool) {
	bar := indexBar(line[:min(len(line), 64+len(" | "))]) // only the first can count
	if bar <= 0 || bar > 64 {
		return "", "", false
	}
	name := strings.TrimRight(line[:bar], " ")
	// compose names are project-service-1 (v2) or project_service_1 (v1)
	if len(name) < 3 || !isName(name) || !strings.ContainsAny(name, "-_") {
		return "", "", false
	}
	return line[bar+3:], name, true
}

// indexBar is strings.Index(s, " | "), looking for the rarer '|' first.
func indexBar(s string) int {
	for from := 1; from < len(s)-1; {
		i := strings.IndexByte(s[from:len(s)-1], '|')
		if i < 0 {
			return -1
		}
		i += from
		if s[i-1] == ' ' && s[i+1] == ' ' {
			return i - 1
		}
		from = i + 1
	}
	return -1
}

// parseCutSyslog finds "prog[pid]: " in a syslog line whose timestamp was cut when pasted
// ("3 16:12:47 node k3s[911]: E0403 …"): the program names the component.
func parseCutSyslog(line string) (rest, prog string, ok bool) {
	end := strings.Index(line, "]: ")
	if end <= 0 || end > 96 {
		return "", "", false
	}
	open := strings.LastIndexByte(line[:end], '[')
	if open <= 0 || !isDigits(line[open+1:end]) {
		return "", "", false
	}
	start := strings.LastIndexByte(line[:open], ' ') + 1
	prog = line[start:open]
	if prog == "" || !isName(prog) {
		return "", "", false
	}
	return line[end+3:], prog, true
}

// parseProgramKlog reads "prog: <klog line>", a syslog line cut down to its program name without
// a pid (RHEL's /var/log/messages as grepped: "kube-apiserver: I0622 19:41:05.146860 …").
func parseProgramKlog(line string) (rest, prog string, ok bool) {
	end := strings.Index(line, ": ")
	if end <= 0 || end > 64 || !isName(line[:end]) {
		return "", "", false
	}
	if _, ok := parseKlogHeader(line[end+2:]); !ok {
		return "", "", false
	}
	return line[end+2:], line[:end], true
}

// isName reports whether s looks like a program or service name.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// accessLog401 reads an API server access-log line that answered 401, in any era's form:
// httplog's structured `"HTTP" verb="GET" URI="…" … userAgent="…" … srcIP="…" resp=401`,
// and the older `GET /path: (4.3ms) 401 [user-agent 10.0.0.1:47328]` (wrap.go, handlers.go;
// before 1.8 the agent is bracketed too, `[[agent] ip]`, and the oldest have no client at all).
func accessLog401(msg string) (*AuditInfo, bool) {
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

// parseLeadingTime reads an RFC 3339 timestamp that starts a line of an unstructured logger
// (hclog's "2021-09-08T08:45:40.239Z [ERROR] …", istio's tab-separated lines).
func parseLeadingTime(line string) (rest string, t time.Time, ok bool) {
	if len(line) < 21 || !isDigits(line[:4]) || line[4] != '-' || line[10] != 'T' {
		return "", t, false
	}
	end := strings.IndexAny(line, " \t")
	if end < 20 {
		return "", t, false
	}
	t, err := time.Parse(time.RFC3339Nano, line[:end])
	if err != nil {
		return "", t, false
	}
	return strings.TrimLeft(line[end:], " \t"), t, true
}
