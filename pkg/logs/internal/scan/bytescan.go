// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import (
	"encoding/binary"
	"math/bits"
)

// lastNewline is bytes.LastIndexByte(b, '\n') eight bytes at a time (bytes.LastIndexByte reads
// one at a time; the line before an anchor is searched for every line the Gate passes).
func lastNewline(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x7f7f7f7f7f7f7f7f
	i := len(b)
	for ; i >= 8; i -= 8 {
		w := binary.LittleEndian.Uint64(b[i-8:]) ^ ('\n' * ones) // newline bytes are zero
		// A zero byte's high bit, exactly (no borrow from one byte into the next).
		if z := ^((w&highs + highs) | w | highs); z != 0 {
			return i - 8 + (63-bits.LeadingZeros64(z))/8
		}
	}
	for i--; i >= 0; i-- {
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}

// isASCII reports whether every byte of b is below 128.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
