// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bytes"
	"strings"
	"unsafe"

	"github.com/credwatch/credwatch/pkg/redact"
)

// maxPrevLine bounds the line before a block that the block carries (chunk.prev): its last
// bytes, where a token broken at its end would be.
const maxPrevLine = 64 << 10

// continued is the part of text (a line of block), from at, that finishes a token broken at
// the end of the line before it (redact.BrokenTail), in a string of its own, or "": evidence is
// redacted a line at a time, long after the line before is gone, so aggregator.Settle asks
// while the block is there, for the lines a group keeps as evidence. The line before is found
// from where text's bytes are in block; for the block's first line it is prev, the last line of
// the block before (chunk.prev). A line made valid UTF-8 is a copy: it has none.
func continued(block []byte, prev, text string) (cont string, at int) {
	if len(text) == 0 || len(block) == 0 {
		return "", 0
	}
	start := int(uintptr(unsafe.Pointer(unsafe.StringData(text))) - uintptr(unsafe.Pointer(unsafe.SliceData(block))))
	switch {
	case start == 0:
		// the block's first line: prev
	case start < 0 || start > len(block) || block[start-1] != '\n':
		return "", 0
	default:
		b := block[:start-1]
		b = b[bytes.LastIndexByte(b, '\n')+1:]
		prev = unsafe.String(unsafe.SliceData(b), len(b))
	}
	if cont, at = Continuation(prev, text); cont != "" {
		return strings.Clone(cont), at
	}
	return "", 0
}

// Continuation is the part of line, from at, that finishes a token broken at the end of prev,
// the line before it (redact.BrokenTail), or "" (also when prev is "", unknown). A partial line
// of CRI ("<time> stderr P <part>") or of Docker's json-file driver (a "log" that does not end
// in a newline: the driver cuts lines at 16 KiB) is continued after the next line's envelope.
// For callers that show lines one at a time (EvidenceLine).
func Continuation(prev, line string) (cont string, at int) {
	if prev == "" || line == "" {
		return "", 0
	}
	if part, ok := criPartial(prev); ok {
		if at = criContent(line); at < 0 {
			return "", 0
		}
		prev, line = part, line[at:]
	} else if part, ok := dockerPartial(prev); ok {
		if !strings.HasPrefix(line, dockerLog) {
			return "", 0
		}
		at = len(dockerLog)
		prev, line = part, line[at:]
	}
	if n := redact.BrokenTail(prev, line); n > 0 {
		return line[:n], at
	}
	return "", 0
}

// EvidenceLine is line as credwatch shows it, prev the line before it in its file ("" if
// unknown): the rest of a token broken at the end of prev replaced by redact.Marker, any token's
// signature and private key dropped (redact.Text), clipped at max bytes.
func EvidenceLine(prev, line string, max int) string {
	if c, at := Continuation(prev, line); c != "" {
		line = line[:at] + redact.Marker + line[at+len(c):]
	}
	line = redact.Text(strings.TrimRight(line, "\r"))
	if len(line) > max {
		line = line[:max] + "…"
	}
	return line
}

// lastLine is a copy of the last line of block (without its newline), or of its last
// maxPrevLine bytes: what the next block carries as chunk.prev.
func lastLine(block []byte) string {
	b := bytes.TrimSuffix(block, []byte{'\n'})
	b = b[bytes.LastIndexByte(b, '\n')+1:]
	return string(b[max(0, len(b)-maxPrevLine):])
}

// criPartial is the part of a CRI partial line ("<RFC3339> stdout|stderr P <part>"), if line
// is one.
func criPartial(line string) (string, bool) {
	at := criContent(line)
	if at < 2 || line[at-2] != 'P' {
		return "", false
	}
	return line[at:], true
}

// criContent is where the content of a tagged CRI line starts, or -1.
func criContent(line string) int {
	sp := strings.IndexByte(line, ' ')
	if sp < 20 || sp > 40 || len(line) < sp+10 || line[4] != '-' || line[10] != 'T' {
		return -1
	}
	s := line[sp+1:]
	if !strings.HasPrefix(s, "stdout ") && !strings.HasPrefix(s, "stderr ") || s[7] != 'F' && s[7] != 'P' || s[8] != ' ' {
		return -1
	}
	return sp + 10
}

// dockerLog is how the json-file logging driver starts a line.
const dockerLog = `{"log":"`

// dockerPartial is the "log" value of a json-file line, as written (escaped), if the line is
// one the driver cut: the value does not end in an escaped newline.
func dockerPartial(line string) (string, bool) {
	if !strings.HasPrefix(line, dockerLog) {
		return "", false
	}
	v := line[len(dockerLog):]
	end := -1
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' {
			i++ // the escaped byte
		} else if v[i] == '"' {
			end = i
			break
		}
	}
	if end < 0 {
		return "", false
	}
	v = v[:end]
	if strings.HasSuffix(v, `\n`) && escapes(v[:len(v)-1]) {
		return "", false // a whole line
	}
	return v, true
}

// escapes reports whether s ends in an odd number of backslashes: the byte after it is escaped.
func escapes(s string) bool {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}
