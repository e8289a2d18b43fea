// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"syscall"
)

// MapMinimum is the file size from which a plain file is mapped instead of read: mapping
// saves copying every byte through read(2).
const MapMinimum = 8 << 20

// ReleaseBatch is how many bytes of finished blocks are dropped from the process at once: one
// madvise per block costs a sixth of a sparse scan's time (each is a TLB shootdown on every CPU
// running the process); one per 8 MiB of finished blocks, adjacent ones merged, keeps RSS
// bounded all the same, even while a descheduled worker holds an early block.
const ReleaseBatch = 8 << 20

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
	if r.bytes += hi - lo; r.bytes < ReleaseBatch {
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

// Mapping is a large plain file mapped read-only, its blocks handed out as slices of Data: the
// pages of a released block are dropped from the process (they stay in the page cache), so
// resident memory stays bounded by the blocks in flight.
type Mapping struct {
	data     []byte
	rel      releaser
	inFlight sync.WaitGroup
}

// Map maps f if it is suitable: a regular file of at least MapMinimum bytes, not gzip, that the
// kernel agrees to map. ok is false otherwise, and the caller reads f instead.
func Map(f *os.File) (_ *Mapping, ok bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < MapMinimum || int64(int(fi.Size())) != fi.Size() {
		return nil, false
	}
	var magic [2]byte
	if n, _ := f.ReadAt(magic[:], 0); n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return nil, false
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, false
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	return &Mapping{data: data, rel: releaser{data: data, page: os.Getpagesize()}}, true
}

// Data is the mapped file.
func (m *Mapping) Data() []byte { return m.data }

// Hold marks a block of Data in use until its Release.
func (m *Mapping) Hold() { m.inFlight.Add(1) }

// Release says the block Data()[lo:hi] is done: its pages go in the next batch dropped.
func (m *Mapping) Release(lo, hi int) {
	m.rel.finish(lo, hi)
	m.inFlight.Done()
}

// Close waits until every held block is released, then unmaps the file.
func (m *Mapping) Close() error {
	m.inFlight.Wait()
	if err := syscall.Munmap(m.data); err != nil {
		return fmt.Errorf("unmap: %w", err)
	}
	return nil
}
