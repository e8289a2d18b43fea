// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import "strings"

// CRI reads the CRI log envelope, "<RFC3339Nano> stdout|stderr F|P <line>" (older writers have
// no F|P tag): the rest of the line and its timestamp, unread. The caller reads the time (a
// clock that remembers the minute, say) and takes the envelope only if it is one.
func CRI(line string) (rest, timestamp string, ok bool) {
	sp := strings.IndexByte(line, ' ')
	if sp < 20 || sp > 40 || !IsDigits(line[:4]) || line[4] != '-' || line[10] != 'T' {
		return "", "", false
	}
	s := line[sp+1:]
	switch {
	case strings.HasPrefix(s, "stdout "), strings.HasPrefix(s, "stderr "):
		s = s[7:]
	default:
		return "", "", false
	}
	if len(s) >= 2 && (s[0] == 'F' || s[0] == 'P') && s[1] == ' ' {
		s = s[2:]
	}
	return s, line[:sp], true
}
