// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"strings"
	"time"
)

// ProgramKlog reads "prog: <klog line>" (Program followed by a klog header), a
// syslog line cut down to its program name without a pid (RHEL's /var/log/messages as grepped:
// "kube-apiserver: I0622 19:41:05.146860 …").
func ProgramKlog(line string) (rest, prog string, ok bool) {
	rest, prog, ok = Program(line)
	if !ok {
		return "", "", false
	}
	if _, ok := KlogHeader(rest); !ok {
		return "", "", false
	}
	return rest, prog, true
}

// KubectlPrefix reads "[pod/NAME/CONTAINER] line" (kubectl logs --prefix) and
// "POD CONTAINER line" (stern, kubectl-with-prefix scripts), the latter only when the rest is a
// known format so that ordinary text is not mistaken for a prefix.
func KubectlPrefix(line string) (rest, pod, container string, ok bool) {
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
	if _, ok := KlogHeader(rest); ok || strings.HasPrefix(rest, "{") {
		return rest, line[:sp1], s[:sp2], true
	}
	if r, ts, ok := CRI(rest); ok {
		if _, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			return r, line[:sp1], s[:sp2], true
		}
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
