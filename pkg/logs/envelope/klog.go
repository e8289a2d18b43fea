// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"strconv"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/logs/internal/quoted"
)

// Klog is "E1213 15:29:38.634005       1 authentication.go:63] ".
// Its numbers are as written (US: the fraction's digits, microseconds when there are six).
type Klog struct {
	Month, Day, HH, MM, SS, US int
	Source, Body               string
}

// Time is the header's time in the year WithYear gives it from ref.
func (h Klog) Time(ref time.Time) time.Time {
	return WithYear(time.Month(h.Month), h.Day, h.HH, h.MM, h.SS, h.US*1000, ref)
}

// Digits2 is the value of two ASCII digits.
func Digits2(s string) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

// isKlogSeverity reports whether c is one of IWEF.
func isKlogSeverity(c byte) bool { return c == 'I' || c == 'W' || c == 'E' || c == 'F' }

// IndexBracketSpace is strings.Index(s, "] "), looking for the rare ']' first.
func IndexBracketSpace(s string) int {
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

// KlogHeader reads a klog header and splits off its body (the message after "] "); a line cut
// inside the header keeps what there is as the body.
func KlogHeader(s string) (Klog, bool) {
	h, ok := KlogClock(s)
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
				h.US = h.US*10 + int(frac[k]-'0')
			}
		} else {
			h.US, _ = strconv.Atoi(frac) // out of range: Atoi's bound, as before
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
	end := IndexBracketSpace(s[i:])
	if end < 0 {
		if strings.HasSuffix(s, "]") {
			end = len(s) - i - 1
		} else {
			// Truncated inside the header: keep what is there as the body.
			h.Body = s[i:]
			return h, true
		}
	}
	h.Source = s[i : i+end]
	if i+end+2 <= len(s) {
		h.Body = s[i+end+2:]
	}
	return h, true
}

// KlogClock reads the start of a klog header, "Lmmdd hh:mm:ss", of a line of at least 22 bytes:
// its severity letter, date and clock, the part of KlogHeader that does not look past the clock.
func KlogClock(s string) (Klog, bool) {
	var h Klog
	if len(s) < 22 || !isKlogSeverity(s[0]) || !IsDigits(s[1:5]) || s[5] != ' ' ||
		s[8] != ':' || s[11] != ':' || !IsDigits(s[6:8]) || !IsDigits(s[9:11]) || !IsDigits(s[12:14]) {
		return h, false
	}
	h.Month, h.Day = Digits2(s[1:3]), Digits2(s[3:5])
	h.HH, h.MM, h.SS = Digits2(s[6:8]), Digits2(s[9:11]), Digits2(s[12:14])
	return h, h.Month >= 1 && h.Month <= 12 && h.Day >= 1 && h.Day <= 31
}

// KlogBody reads a klog message: structured `"msg" key="value" err="..."` or unstructured text
// (all of it msg). truncated says a quoted value was cut off.
func KlogBody(body string) (msg, err string, truncated bool) {
	if !strings.HasPrefix(body, `"`) {
		return body, "", false
	}
	msg, rest, complete := quoted.Prefix(body)
	if !complete {
		return msg, "", true
	}
	for rest != "" {
		rest = strings.TrimLeft(rest, " ")
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 || strings.IndexByte(rest[:eq], ' ') >= 0 {
			return msg, err, truncated
		}
		key := rest[:eq]
		rest = rest[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			val, rest, complete = quoted.Prefix(rest)
			if !complete {
				truncated = true
			}
		} else {
			sp := strings.IndexByte(rest, ' ')
			if sp < 0 {
				val, rest = rest, ""
			} else {
				val, rest = rest[:sp], rest[sp:]
			}
		}
		if key == "err" && err == "" {
			err = val
		}
	}
	return msg, err, truncated
}
