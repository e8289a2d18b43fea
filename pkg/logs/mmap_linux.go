package logs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// mmapMinimum is the file size from which a plain file is mapped instead of read: mapping
// saves copying every byte through read(2).
const mmapMinimum = 8 << 20

// produceMapped reads a large plain (not gzip) regular file through a read-only mapping, handing
// the workers blocks that are slices of the mapping. Pages are dropped from the process as soon
// as their block is done, so resident memory stays bounded by the blocks in flight. ok is false
// when the file is not suitable (small, compressed, not regular, mapping refused): the caller
// then reads it.
func produceMapped(ctx context.Context, st *inputState, f *os.File, bufSize int, work chan<- chunk,
	read *atomic.Int64, progress func(int64), status *InputStatus) (_ InputStatus, ok bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < mmapMinimum || int64(int(fi.Size())) != fi.Size() {
		return *status, false
	}
	var magic [2]byte
	if n, _ := f.ReadAt(magic[:], 0); n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return *status, false
	}
	size := int(fi.Size())
	data, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return *status, false
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	var inFlight sync.WaitGroup
	defer func() {
		inFlight.Wait()
		_ = syscall.Munmap(data)
	}()
	status.Read = true
	status.Bytes = int64(size)
	if looksBinary(data[:min(size, 4096)]) {
		status.Problems = append(status.Problems, "binary data, not a text log: skipped")
		status.Read = false
		return *status, true
	}
	page := os.Getpagesize()
	block := max(bufSize/2, 1)
	seq, extra := 0, int64(0)
	emit := func(lo, hi int) {
		inFlight.Add(1)
		work <- chunk{in: st, data: data[lo:hi], seq: seq, extra: extra, release: func() {
			// Drop the block's whole pages from the process (they stay in the page cache).
			if a, b := (lo+page-1)/page*page, hi/page*page; b > a {
				_ = syscall.Madvise(data[a:b], syscall.MADV_DONTNEED)
			}
			inFlight.Done()
		}}
		seq++
		if progress != nil {
			progress(read.Add(int64(hi - lo)))
		}
	}
	for pos := 0; pos < size; {
		if ctx.Err() != nil {
			return *status, true
		}
		end := min(pos+block, size)
		if end < size {
			cut := size
			if nl := bytes.IndexByte(data[end:], '\n'); nl >= 0 {
				cut = end + nl + 1
			}
			ls := pos + bytes.LastIndexByte(data[pos:end], '\n') + 1
			if cut-ls > bufSize {
				// An over-long line: skip it as the reading path does.
				if ls > pos {
					emit(pos, ls)
				}
				status.Problems = appendLimited(status.Problems, fmt.Sprintf("line at byte %d is longer than %d bytes: skipped", ls, bufSize))
				status.SkippedLines++
				extra++
				pos = cut
				continue
			}
			end = cut
		}
		emit(pos, end)
		pos = end
	}
	return *status, true
}
