// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redacttest

// Hostile is a string a cluster or a file may hold that must not reach a terminal raw, and how
// every terminal path prints it (redact.Printable).
type Hostile struct {
	Name, Raw, Quoted string
}

// HostileText are the terminal-hijacking spellings each terminal path is tested with: escape
// sequences (CSI, OSC), other C0 controls, DEL, C1, bytes that are not UTF-8, and the bidi and
// zero-width format characters that make one string display as another.
var HostileText = []Hostile{
	{"CSI colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
	{"CSI clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
	{"OSC window title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
	{"OSC hyperlink", "\x1b]8;;https://evil.example\x1b\\ok\x1b]8;;\x1b\\", `\x1b]8;;https://evil.example\x1b\ok\x1b]8;;\x1b\`},
	{"carriage return", "ok\rFAIL", `ok\x0dFAIL`},
	{"NUL and backspace", "a\x00b\x08", `a\x00b\x08`},
	{"DEL", "a\x7fb", `a\x7fb`},
	{"C1 CSI", "\u009b31mred", `\u009b31mred`},
	{"lone C1 byte", "a\x9b31mb", `a\x9b31mb`},
	{"not UTF-8", "a\xffb", `a\xffb`},
	{"right-to-left override", "https://evil\u202esvc.tluafed.setenrebuk//:sptth", `https://evil\u202esvc.tluafed.setenrebuk//:sptth`},
	{"bidi embedding and pop", "a\u202ab\u202c", `a\u202ab\u202c`},
	{"bidi isolate", "a\u2066b\u2069", `a\u2066b\u2069`},
	{"zero-width space", "https://kubernetes\u200b.default.svc", `https://kubernetes\u200b.default.svc`},
	{"zero-width joiner and marks", "a\u200db\u200ec\u200f", `a\u200db\u200ec\u200f`},
	{"byte-order mark", "\ufeffissuer", `\ufeffissuer`},
	{"line separator", "a\u2028b", `a\u2028b`},
}
