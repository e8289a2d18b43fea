// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package report

// indentJSON appends src, the output of json.Marshal or json.Encoder.Encode (compact: no space
// outside strings but a newline after the value), to dst indented as json.Indent(dst, src, "",
// "  ") would, without json.Indent's validating scanner (a third of -o json's time on a large
// report; the value is json's own output). TestIndentJSON and FuzzIndentJSON compare the two.
func indentJSON(dst, src []byte) []byte { return indentAt(dst, src, 0) }

// indentAt is indentJSON for a value nested depth levels deep in a document (renderMembers):
// its lines are indented for that depth, and no whitespace after it is kept.
func indentAt(dst, src []byte, depth int) []byte {
	top := depth
	needIndent, started := false, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			if started && depth == 0 && top == 0 && !needIndent {
				dst = append(dst, c) // after the top-level value
			}
			continue
		}
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			dst = newline(dst, depth)
		}
		started = true
		switch c {
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			dst = append(dst, src[i:j]...)
			i = j - 1
		case '{', '[':
			needIndent = true // {} and [] stay on one line
			dst = append(dst, c)
		case ',':
			dst = newline(append(dst, c), depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				dst = newline(dst, depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

func newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, ' ', ' ')
	}
	return dst
}
