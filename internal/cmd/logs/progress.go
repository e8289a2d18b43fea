// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
)

// progressThreshold is the input size from which --progress=auto shows a bar.
const progressThreshold = 64 << 20

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// startProgress draws a progress bar on stderr when it is wanted; the returned func clears it.
func (o *options) startProgress(cfg *logs.Config, inputs []logs.Input) func() {
	var total int64
	for _, in := range inputs {
		total += in.Size
	}
	show := o.progress == "always"
	if o.progress == "auto" && !o.quiet {
		_, tty := report.Terminal(o.streams.ErrOut)
		show = tty && total >= progressThreshold
	}
	if !show {
		return func() {}
	}
	var read atomic.Int64
	cfg.Progress = func(n int64) { read.Store(n) }
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				_ = redact.Control(o.streams.ErrOut, "\r\033[K")
				return
			case <-t.C:
				_ = redact.Control(o.streams.ErrOut, "\r"+bar(read.Load(), total, time.Since(start)))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// bar renders "[=====>     ]  42%  420 MB / 1.0 GB  310 MB/s".
func bar(read, total int64, elapsed time.Duration) string {
	const width = 30
	rate := float64(read) / elapsed.Seconds()
	if total <= 0 {
		return fmt.Sprintf("%s read  %s/s", size(read), size(int64(rate)))
	}
	frac := min(float64(read)/float64(total), 1)
	n := int(frac * width)
	b := make([]byte, width)
	for i := range b {
		switch {
		case i < n:
			b[i] = '='
		case i == n:
			b[i] = '>'
		default:
			b[i] = ' '
		}
	}
	return fmt.Sprintf("[%s] %3.0f%%  %s / %s  %s/s", b, 100*frac, size(read), size(total), size(int64(rate)))
}

func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
