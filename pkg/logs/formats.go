package logs

import (
	"strconv"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/logs/envelope"
	"github.com/credwatch/credwatch/pkg/logs/internal/quoted"
)

// parseCRI reads the CRI envelope (envelope.CRI) with its time read by c (nil: time.Parse): a
// line whose timestamp is no RFC 3339 time is not CRI.
func parseCRI(line string, c *minuteClock) (rest string, t time.Time, ok bool) {
	rest, ts, ok := envelope.CRI(line)
	if !ok {
		return "", t, false
	}
	if t, err := c.rfc3339(ts); err == nil {
		return rest, t, true
	}
	return "", t, false
}

// parseProgramKlog reads "prog: <klog line>" (envelope.Program followed by a klog header), a
// syslog line cut down to its program name without a pid (RHEL's /var/log/messages as grepped:
// "kube-apiserver: I0622 19:41:05.146860 …").
func parseProgramKlog(line string) (rest, prog string, ok bool) {
	rest, prog, ok = envelope.Program(line)
	if !ok {
		return "", "", false
	}
	if _, ok := parseKlogHeader(rest); !ok {
		return "", "", false
	}
	return rest, prog, true
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

// klogHeader is "E1213 15:29:38.634005       1 authentication.go:63] ".
type klogHeader struct {
	month, day, hh, mm, ss, us int
	source, body               string
}

func (h klogHeader) time(ref time.Time) time.Time {
	return envelope.WithYear(time.Month(h.month), h.day, h.hh, h.mm, h.ss, h.us*1000, ref)
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
	if len(s) < 22 || !isKlogSeverity(s[0]) || !envelope.IsDigits(s[1:5]) || s[5] != ' ' ||
		s[8] != ':' || s[11] != ':' || !envelope.IsDigits(s[6:8]) || !envelope.IsDigits(s[9:11]) || !envelope.IsDigits(s[12:14]) {
		return h, false
	}
	h.month, h.day = digits2(s[1:3]), digits2(s[3:5])
	h.hh, h.mm, h.ss = digits2(s[6:8]), digits2(s[9:11]), digits2(s[12:14])
	return h, h.month >= 1 && h.month <= 12 && h.day >= 1 && h.day <= 31
}

// readKlogBody fills Msg, Err, Truncated and Audit from a klog message.
func readKlogBody(body string, r *Record) {
	parseKlogBody(body, r)
	if a, ok := envelope.AccessLog401(body); ok {
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
