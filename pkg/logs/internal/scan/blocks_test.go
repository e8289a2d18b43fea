// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import "testing"

func TestNextBlock(t *testing.T) {
	t.Parallel()
	data := []byte("aaaa\nbb\ncccccccccc\ndd\n")
	for _, tt := range []struct {
		name               string
		pos, size, maxLine int
		wantStart, wantEnd int
		wantLong           bool
	}{
		{"the rest fits", 0, 100, 100, 22, 22, false},
		{"cut at the next line end", 0, 6, 100, 8, 8, false},
		{"just after a line end, the next", 0, 5, 100, 8, 8, false},
		{"a line longer than maxLine", 5, 5, 6, 8, 19, true},
		{"from the middle", 8, 3, 100, 19, 19, false},
	} {
		start, end, long := NextBlock(data, tt.pos, tt.size, tt.maxLine)
		if start != tt.wantStart || end != tt.wantEnd || long != tt.wantLong {
			t.Errorf("%s: NextBlock(%d, %d, %d) = %d, %d, %v; want %d, %d, %v", tt.name, tt.pos, tt.size, tt.maxLine,
				start, end, long, tt.wantStart, tt.wantEnd, tt.wantLong)
		}
	}
}
