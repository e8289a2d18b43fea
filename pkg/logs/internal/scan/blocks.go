// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import "bytes"

// NextBlock cuts the next block of whole lines from data[pos:], of about size bytes: it ends at
// the first line end at or after pos+size, or at data's end. long says the line the cut falls
// in, data[lineStart:end], is longer than maxLine: the caller skips it, after the whole lines of
// data[pos:lineStart].
func NextBlock(data []byte, pos, size, maxLine int) (lineStart, end int, long bool) {
	end = min(pos+size, len(data))
	if end == len(data) {
		return end, end, false
	}
	cut := len(data)
	if nl := bytes.IndexByte(data[end:], '\n'); nl >= 0 {
		cut = end + nl + 1
	}
	if ls := pos + bytes.LastIndexByte(data[pos:end], '\n') + 1; cut-ls > maxLine {
		return ls, cut, true
	}
	return cut, cut, false
}
