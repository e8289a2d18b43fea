package logs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
)

// mmapMinimum is the file size from which a plain file is mapped instead of read: mapping
// saves copying every byte through read(2).
const mmapMinimum = 8 << 20

// releaseBatch is how many bytes of finished blocks are dropped from the process at once: one
// madvise per block costs a sixth of a sparse scan's time (each is a TLB shootdown on every CPU
// running the process); one per 8 MiB of finished blocks, adjacent ones merged, keeps RSS
// bounded all the same, even while a descheduled worker holds an early block.
const releaseBatch = 8 << 20

// releaser drops the pages of a mapping's finished blocks from the process (they stay in the
// page cache).
type releaser struct {
	mu      sync.Mutex
	data    []byte
	page    int
	pending []span // finished blocks not dropped yet
	bytes   int    // their size
}

type span struct{ lo, hi int }

func (r *releaser) finish(lo, hi int) {
	r.mu.Lock()
	r.pending = append(r.pending, span{lo, hi})
	if r.bytes += hi - lo; r.bytes < releaseBatch {
		r.mu.Unlock()
		return
	}
	sort.Slice(r.pending, func(i, j int) bool { return r.pending[i].lo < r.pending[j].lo })
	var drop []span // whole pages of merged runs
	run := r.pending[0]
	for _, sp := range append(r.pending[1:], span{-1, -1}) {
		if sp.lo == run.hi {
			run.hi = sp.hi
			continue
		}
		// Only the run's whole pages: a page it shares with a block in flight stays.
		if a, b := (run.lo+r.page-1)/r.page*r.page, run.hi/r.page*r.page; b > a {
			drop = append(drop, span{a, b})
		}
		run = sp
	}
	r.pending, r.bytes = r.pending[:0], 0
	r.mu.Unlock()
	// Outside the lock: a worker finishing its block meanwhile need not wait for the kernel.
	for _, d := range drop {
		_ = syscall.Madvise(r.data[d.lo:d.hi], syscall.MADV_DONTNEED)
	}
}

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
	block := max(bufSize/2, 1) * mappedBlocks
	rel := &releaser{data: data, page: os.Getpagesize()}
	seq, extra := 0, int64(0)
	emit := func(lo, hi int) {
		inFlight.Add(1)
		work <- chunk{in: st, data: data[lo:hi], seq: seq, extra: extra, release: func() {
			rel.finish(lo, hi)
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

// mappedBlocks is how many reading blocks a mapped file's block holds: fewer, larger blocks
// mean less bookkeeping per block (the evidence settled, the scratch space reset) and need no
// buffer.
const mappedBlocks = 4
