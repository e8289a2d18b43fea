package logs

import (
	"strconv"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/logs/internal/quoted"
)

// parseCRI reads the CRI log envelope: "<RFC3339Nano> stdout|stderr F|P <line>".
func parseCRI(line string, c *minuteClock) (rest string, t time.Time, ok bool) {
	sp := strings.IndexByte(line, ' ')
	if sp < 20 || sp > 40 || !isDigits(line[:4]) || line[4] != '-' || line[10] != 'T' {
		return "", t, false
	}
	s := line[sp+1:]
	switch {
	case strings.HasPrefix(s, "stdout "), strings.HasPrefix(s, "stderr "):
		s = s[7:]
	default:
		return "", t, false
	}
	if len(s) < 2 || (s[0] != 'F' && s[0] != 'P') || s[1] != ' ' {
		// Older CRI writers have no tag.
		if tt, err := c.rfc3339(line[:sp]); err == nil {
			return s, tt, true
		}
		return "", t, false
	}
	tt, err := c.rfc3339(line[:sp])
	if err != nil {
		return "", t, false
	}
	return s[2:], tt, true
}

var months = map[string]time.Month{"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6, "Jul": 7,
	"Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12}

// parseSyslog reads "Dec 16 09:25:01 host prog[pid]: msg" (journalctl, /var/log/syslog) and the
// ISO form "2022-12-16T09:25:01+0000 host prog[pid]: msg" (journalctl -o short-iso).
func parseSyslog(line string, ref time.Time) (rest string, t time.Time, host, prog string, ok bool) {
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
		t = withYear(m, day, hh, mm, ss, 0, ref)
		s = line[16:]
	} else if len(line) > 20 && isDigits(line[:4]) && line[4] == '-' && line[10] == 'T' {
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

// syslogYearless reports a line parseSyslog reads whose date has no year and no zone ("Dec 16
// 09:25:01", not the ISO form).
func syslogYearless(line string) bool { return len(line) > 0 && !isDigits(line[:1]) }

// withYear builds a time from a year-less timestamp: the year of ref, or the one before when
// that would put the time more than a day after ref.
func withYear(m time.Month, day, hh, mm, ss, ns int, ref time.Time) time.Time {
	if ref.IsZero() {
		ref = time.Now()
	}
	t := time.Date(ref.Year(), m, day, hh, mm, ss, ns, time.UTC)
	if t.After(ref.Add(24 * time.Hour)) {
		t = t.AddDate(-1, 0, 0)
	}
	return t
}

// parseKubectlPrefix reads "[pod/NAME/CONTAINER] line" (kubectl logs --prefix) and
// "POD CONTAINER line" (stern, kubectl-with-prefix scripts), the latter only when the rest is a
// known format so that ordinary text is not mistaken for a prefix.
func parseKubectlPrefix(line string) (rest, pod, container string, ok bool) {
	if strings.HasPrefix(line, "[pod/") {
		end := strings.Index(line, "] ")
		if end < 0 {
			return "", "", "", false
		}
		pod, container, ok := strings.Cut(line[5:end], "/")
		if !ok || strings.IndexByte(container, '/') >= 0 { // exactly two parts
			return "", "", "", false
		}
		return line[end+2:], pod, container, true
	}
	sp1 := strings.IndexByte(line, ' ')
	if sp1 <= 0 || !isDNSName(line[:sp1]) {
		return "", "", "", false
	}
	s := line[sp1+1:]
	sp2 := strings.IndexByte(s, ' ')
	if sp2 <= 0 || !isDNSName(s[:sp2]) {
		return "", "", "", false
	}
	rest = s[sp2+1:]
	if _, ok := parseKlogHeader(rest); ok || strings.HasPrefix(rest, "{") {
		return rest, line[:sp1], s[:sp2], true
	}
	if _, _, ok := parseCRI(rest, nil); ok {
		return rest, line[:sp1], s[:sp2], true
	}
	return "", "", "", false
}

func isDNSName(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// klogHeader is "E1213 15:29:38.634005       1 authentication.go:63] ".
type klogHeader struct {
	month, day, hh, mm, ss, us int
	source, body               string
}

func (h klogHeader) time(ref time.Time) time.Time {
	return withYear(time.Month(h.month), h.day, h.hh, h.mm, h.ss, h.us*1000, ref)
}

// digits2 is the value of two ASCII digits.
func digits2(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

// isKlogSeverity reports whether c is one of IWEF.
func isKlogSeverity(c byte) bool { return c == 'I' || c == 'W' || c == 'E' || c == 'F' }

// indexBracketSpace is strings.Index(s, "] "), looking for the rare ']' first.
func indexBracketSpace(s string) int {
	for from := 0; ; {
		k := strings.IndexByte(s[from:], ']')
		if k < 0 {
			return -1
		}
		if k += from; k+1 < len(s) && s[k+1] == ' ' {
			return k
		}
		from = k + 1
	}
}

func parseKlogHeader(s string) (klogHeader, bool) {
	h, ok := klogClock(s)
	if !ok {
		return h, false
	}
	i := 14
	if s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if frac := s[i+1 : j]; len(frac) <= 18 {
			for k := 0; k < len(frac); k++ {
				h.us = h.us*10 + int(frac[k]-'0')
			}
		} else {
			h.us, _ = strconv.Atoi(frac) // out of range: Atoi's bound, as before
		}
		i = j
	}
	for i < len(s) && s[i] == ' ' {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' { // thread id
		i++
	}
	if i < len(s) && s[i] == ' ' {
		i++
	}
	end := indexBracketSpace(s[i:])
	if end < 0 {
		if strings.HasSuffix(s, "]") {
			end = len(s) - i - 1
		} else {
			// Truncated inside the header: keep what is there as the body.
			h.body = s[i:]
			return h, true
		}
	}
	h.source = s[i : i+end]
	if i+end+2 <= len(s) {
		h.body = s[i+end+2:]
	}
	return h, true
}

// klogClock reads the start of a klog header, "Lmmdd hh:mm:ss", of a line of at least 22 bytes:
// its severity letter, date and clock (parseKlogHeader, and the line memo's klogTokenTime).
func klogClock(s string) (klogHeader, bool) {
	var h klogHeader
	if len(s) < 22 || !isKlogSeverity(s[0]) || !isDigits(s[1:5]) || s[5] != ' ' ||
		s[8] != ':' || s[11] != ':' || !isDigits(s[6:8]) || !isDigits(s[9:11]) || !isDigits(s[12:14]) {
		return h, false
	}
	h.month, h.day = digits2(s[1:3]), digits2(s[3:5])
	h.hh, h.mm, h.ss = digits2(s[6:8]), digits2(s[9:11]), digits2(s[12:14])
	return h, h.month >= 1 && h.month <= 12 && h.day >= 1 && h.day <= 31
}

// readKlogBody fills Msg, Err, Truncated and Audit from a klog message.
func readKlogBody(body string, r *Record) {
	parseKlogBody(body, r)
	if a, ok := accessLog401(body); ok {
		r.Audit = a
	}
}

// parseKlogBody fills Msg and Err from a klog message: structured `"msg" key="value" err="..."` or
// unstructured text.
func parseKlogBody(body string, r *Record) {
	if !strings.HasPrefix(body, `"`) {
		r.Msg = body
		return
	}
	msg, rest, complete := quoted.Prefix(body)
	r.Msg = msg
	if !complete {
		r.Truncated = true
		return
	}
	for rest != "" {
		rest = strings.TrimLeft(rest, " ")
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 || strings.IndexByte(rest[:eq], ' ') >= 0 {
			return
		}
		key := rest[:eq]
		rest = rest[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			val, rest, complete = quoted.Prefix(rest)
			if !complete {
				r.Truncated = true
			}
		} else {
			sp := strings.IndexByte(rest, ' ')
			if sp < 0 {
				val, rest = rest, ""
			} else {
				val, rest = rest[:sp], rest[sp:]
			}
		}
		if key == "err" && r.Err == "" {
			r.Err = val
		}
	}
}
