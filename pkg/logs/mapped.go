// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/credwatch/credwatch/pkg/logs/internal/scan"
)

// produceMapped reads a large plain (not gzip) regular file through a read-only mapping
// (scan.Map), handing the workers blocks that are slices of the mapping; a block's pages are
// dropped from the process once it is done. ok is false when the file is not suitable (small,
// compressed, not regular, mapping refused, not Linux): the caller then reads it.
func produceMapped(ctx context.Context, st *inputState, f *os.File, bufSize int, work chan<- chunk,
	read *atomic.Int64, progress func(int64), status *InputStatus) (_ InputStatus, ok bool) {
	m, ok := scan.Map(f)
	if !ok {
		return *status, false
	}
	defer func() { _ = m.Close() }() // once the blocks in flight are done
	data := m.Data()
	size := len(data)
	status.Read = true
	status.Bytes = int64(size)
	if looksBinary(data[:min(size, 4096)]) {
		status.Problems = append(status.Problems, "binary data, not a text log: skipped")
		status.Read = false
		return *status, true
	}
	block := max(bufSize/2, 1) * mappedBlocks
	seq, extra := 0, int64(0)
	emit := func(lo, hi int) {
		m.Hold()
		work <- chunk{in: st, data: data[lo:hi], seq: seq, extra: extra, prev: lastLine(data[:lo]), release: func() { m.Release(lo, hi) }}
		seq++
		if progress != nil {
			progress(read.Add(int64(hi - lo)))
		}
	}
	for pos := 0; pos < size; {
		if ctx.Err() != nil {
			return *status, true
		}
		ls, end, long := scan.NextBlock(data, pos, block, bufSize)
		if long {
			// An over-long line: skip it as the reading path does.
			if ls > pos {
				emit(pos, ls)
			}
			status.Problems = appendLimited(status.Problems, fmt.Sprintf("line at byte %d is longer than %d bytes: skipped", ls, bufSize))
			status.SkippedLines++
			extra++
			pos = end
			continue
		}
		emit(pos, end)
		pos = end
	}
	return *status, true
}

// mappedBlocks is how many reading blocks a mapped file's block holds: fewer, larger blocks
// mean less bookkeeping per block (the evidence settled, the scratch space reset) and need no
// buffer.
const mappedBlocks = 4
