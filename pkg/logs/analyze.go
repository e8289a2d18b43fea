// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
	"github.com/credwatch/credwatch/pkg/logs/internal/scan"
)

// Config tunes an analysis. The zero value of every field but Catalogue means the default.
type Config struct {
	Catalogue      *catalogue.Catalogue
	Workers        int              // parallel workers; default GOMAXPROCS
	BlockSize      int              // bytes per block handed to a worker; default 1 MiB
	MaxLineBytes   int              // longer lines are skipped; default 1 MiB
	Evidence       int              // evidence lines kept per host/component/cause; default 6
	BurstPerMinute int              // a burst is consecutive minutes with at least this many lines; default 10
	Since          time.Time        // ignore events before this time (events without a full time are kept: Summary.UnfilteredLines)
	Now            time.Time        // "now", for year-less timestamps read from stdin; default time.Now
	Year           int              // force the year of year-less timestamps
	Progress       func(read int64) // called with the bytes read so far, from any goroutine

}

func (c Config) withDefaults() Config {
	if c.Catalogue == nil {
		c.Catalogue = catalogue.Default()
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.BlockSize <= 0 {
		c.BlockSize = 1 << 20
	}
	if c.MaxLineBytes <= 0 {
		c.MaxLineBytes = 1 << 20
	}
	if c.Evidence <= 0 {
		c.Evidence = 6
	}
	if c.BurstPerMinute <= 0 {
		c.BurstPerMinute = 10
	}
	if c.Now.IsZero() {
		c.Now = time.Now()
	}
	return c
}

// chunk is a block of whole lines from one input.
type chunk struct {
	in      *inputState
	data    []byte
	buf     []byte // a pool buffer to return, or nil
	release func() // called when the block is done, or nil
	seq     int    // the block's index within its input
	extra   int64  // lines before the block that are in no block (skipped over-long lines)
	prev    string // the line before the block's first, or its last maxPrevLine bytes (lastLine)
}

type inputState struct {
	Input
	lc         lineHint
	matched    atomic.Int64
	skipped    atomic.Int64
	unfiltered atomic.Int64 // matched lines Since could not filter
	formats    sync.Map
	ownHosts   atomic.Bool // some line named its own host, so the input's host is only a fallback

	mu     sync.Mutex
	counts []int64 // lines per block, by seq (workers count them)
	extras []int64 // chunk.extra by seq
}

// blockDone records how many lines block seq held.
func (st *inputState) blockDone(seq int, lines, extra int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for len(st.counts) <= seq {
		st.counts = append(st.counts, 0)
		st.extras = append(st.extras, 0)
	}
	st.counts[seq], st.extras[seq] = lines, extra
}

// firstLines returns the absolute number of the first line of every block, and the input's
// line count.
func (st *inputState) firstLines() ([]int64, int64) {
	first := make([]int64, len(st.counts))
	total := int64(0)
	prev := int64(0)
	for i, n := range st.counts {
		first[i] = total + st.extras[i] - prev + 1 // extras are cumulative
		prev = st.extras[i]
		total = first[i] - 1 + n
	}
	if k := len(st.counts); k > 0 {
		return first, total
	}
	return first, 0
}

// Analyze reads every input and returns the report. It fails only when ctx is cancelled;
// problems with single inputs are in Report.Inputs.
func Analyze(ctx context.Context, cfg Config, inputs []Input) (*Report, error) {
	cfg = cfg.withDefaults()
	g := scan.NewGate(anchors(cfg.Catalogue))
	bufSize := cfg.BlockSize + cfg.MaxLineBytes
	pool := &bufPool{ch: make(chan []byte, 2*cfg.Workers+2), size: bufSize}
	work := make(chan chunk, cfg.Workers)
	var read atomic.Int64

	aggs := make([]*aggregator, cfg.Workers)
	var wg sync.WaitGroup
	for w := range cfg.Workers {
		aggs[w] = newAggregator(cfg.Evidence)
		wk := &worker{cl: cause.NewClassifier(cfg.Catalogue), gate: g, agg: aggs[w], since: cfg.Since}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range work {
				wk.process(ch)
				if ch.buf != nil {
					pool.put(ch.buf)
				}
				if ch.release != nil {
					ch.release()
				}
			}
		}()
	}

	statuses := make([]InputStatus, len(inputs))
	states := make([]*inputState, len(inputs))
	sem := make(chan struct{}, cfg.Workers)
	var pwg sync.WaitGroup
	for i := range inputs {
		st := &inputState{Input: inputs[i]}
		ref := inputs[i].ModTime
		if ref.IsZero() {
			ref = cfg.Now
		}
		if cfg.Year > 0 {
			ref = time.Date(cfg.Year, 12, 31, 23, 59, 59, 0, time.UTC)
		}
		st.lc = lineHint{host: inputs[i].Host, component: inputs[i].Component, ref: ref}
		states[i] = st
		pwg.Add(1)
		sem <- struct{}{}
		go func() {
			defer pwg.Done()
			defer func() { <-sem }()
			statuses[i] = produce(ctx, st, bufSize, pool, work, &read, cfg.Progress)
		}()
	}
	pwg.Wait()
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read logs: %w", err)
	}
	total := aggs[0]
	for _, a := range aggs[1:] {
		total.Merge(a)
	}
	fixLineNumbers(total)
	for i, st := range states {
		_, statuses[i].Lines = st.firstLines()
		statuses[i].MatchedLines = st.matched.Load()
		statuses[i].UnfilteredLines = st.unfiltered.Load()
		statuses[i].SkippedLines += st.skipped.Load()
		st.formats.Range(func(k, _ any) bool {
			statuses[i].Formats = append(statuses[i].Formats, k.(string))
			return true
		})
		sort.Strings(statuses[i].Formats)
		statuses[i].component, statuses[i].hostGiven, statuses[i].ownHost = st.Component, st.HostGiven, st.ownHosts.Load()
		if statuses[i].Read && !st.ownHosts.Load() {
			total.SeeHost(st.Host, st.Component)
		}
	}
	return buildReport(cfg, total, statuses), nil
}

// anchors are what the gate looks for in lines of c's messages: a line without one is neither
// parsed nor classified.
func anchors(c *catalogue.Catalogue) []string {
	return scan.Anchors(slices.Concat(cause.Markers, cause.PathAnchors), cause.Literals(cause.Standalone(c)))
}

// produce reads one input into blocks of whole lines.
func produce(ctx context.Context, st *inputState, bufSize int, pool *bufPool, work chan<- chunk,
	read *atomic.Int64, progress func(int64)) InputStatus {
	status := InputStatus{Name: st.Name, Host: st.Host}
	rc, err := st.Open()
	if err != nil {
		status.Problems = append(status.Problems, fmt.Sprintf("cannot read: %v", unwrapPath(err)))
		return status
	}
	defer rc.Close()
	if f, ok := rc.(*os.File); ok {
		if done, ok := produceMapped(ctx, st, f, bufSize, work, read, progress, &status); ok {
			return done
		}
	}
	br := bufio.NewReaderSize(rc, 64<<10)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			status.Problems = append(status.Problems, fmt.Sprintf("gzip: %v", err))
			return status
		}
		defer zr.Close()
		r = zr
	}
	status.Read = true
	carry := 0
	var buf []byte
	seq, extra := 0, int64(0)
	var offset int64  // bytes of the input before buf
	prev := ""        // the last line of the block before (chunk.prev)
	skipping := false // inside an over-long line
	first := true
	for {
		if ctx.Err() != nil {
			return status
		}
		if buf == nil {
			buf = pool.get()
		}
		n, rerr := fill(r, buf[carry:])
		status.Bytes += int64(n)
		if progress != nil {
			progress(read.Add(int64(n)))
		}
		data := buf[:carry+n]
		carry = 0
		if first && len(data) > 0 {
			first = false
			if looksBinary(data) {
				status.Problems = append(status.Problems, "binary data, not a text log: skipped")
				status.Read = false
				pool.put(buf)
				return status
			}
		}
		if skipping {
			nl := bytes.IndexByte(data, '\n')
			if nl < 0 {
				offset += int64(len(data))
				if rerr != nil {
					break
				}
				continue
			}
			offset += int64(nl + 1)
			skipping = false
			prev = string(data[max(0, nl-maxPrevLine):nl]) // the skipped line's end
			extra++
			data = data[nl+1:]
			copy(buf, data)
			data = buf[:len(data)]
		}
		eof := rerr != nil
		if eof && !errors.Is(rerr, io.EOF) {
			what := "read error"
			if _, gz := r.(*gzip.Reader); gz {
				what = "truncated gzip stream"
			}
			status.Problems = append(status.Problems, fmt.Sprintf("%s after %d bytes: %v", what, offset+int64(len(data)), rerr))
		}
		cut := len(data)
		if !eof {
			cut = bytes.LastIndexByte(data, '\n') + 1
			if cut == 0 {
				status.Problems = appendLimited(status.Problems, fmt.Sprintf("line at byte %d is longer than %d bytes: skipped", offset, len(buf)))
				status.SkippedLines++
				offset += int64(len(data))
				skipping = true
				continue
			}
		}
		if cut > 0 {
			next := pool.get()
			rest := copy(next, data[cut:])
			last := lastLine(data[:cut]) // before a worker may give the buffer back to the pool
			work <- chunk{in: st, data: data[:cut], buf: buf, seq: seq, extra: extra, prev: prev}
			prev = last
			seq++
			offset += int64(cut)
			buf, carry = next, rest
		}
		if eof {
			break
		}
	}
	if buf != nil {
		pool.put(buf)
	}
	if status.Bytes == 0 && len(status.Problems) == 0 {
		status.Problems = append(status.Problems, "empty")
	}
	return status
}

// bufPool hands out at most cap(ch) read buffers, made only when first needed: a memory-mapped
// input needs none.
type bufPool struct {
	ch   chan []byte
	made atomic.Int32
	size int
}

func (p *bufPool) get() []byte {
	select {
	case b := <-p.ch:
		return b
	default:
	}
	if p.made.Add(1) <= int32(cap(p.ch)) {
		return make([]byte, p.size)
	}
	return <-p.ch
}

func (p *bufPool) put(b []byte) { p.ch <- b }

func appendLimited(list []string, s string) []string {
	if len(list) < 20 {
		return append(list, s)
	}
	return list
}

// looksBinary reports a block that starts like binary data rather than text with a few bad
// lines: more than a tenth of its first 4 KiB is NUL, invalid UTF-8 or control characters.
func looksBinary(b []byte) bool {
	if len(b) > 4096 {
		b = b[:4096]
	}
	total, bad := len(b), 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 || r < 0x20 && r != '\n' && r != '\r' && r != '\t' && r != 0x1b {
			bad++
		}
		b = b[size:]
	}
	return bad*10 > total && bad > 4
}

// fill reads until b is full or the reader fails; unlike io.ReadFull it returns the reader's
// own error, so a truncated gzip stream is told apart from a short last block.
func fill(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// fixLineNumbers turns the block-relative line numbers of the kept evidence into line numbers
// of the input, now that every block has been counted.
func fixLineNumbers(a *aggregator) {
	firsts := map[*inputState][]int64{}
	a.Kept(func(ev *Event) {
		if ev.in == nil {
			return
		}
		f, ok := firsts[ev.in]
		if !ok {
			f, _ = ev.in.firstLines()
			firsts[ev.in] = f
		}
		if ev.seq < len(f) {
			ev.LineNumber += f[ev.seq] - 1
		}
		ev.in = nil
	})
}
