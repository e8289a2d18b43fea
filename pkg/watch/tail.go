// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/credwatch/credwatch/internal/userfile"
)

const (
	// tailReadMax bounds what one poll reads of a file; the rest is read at the next poll.
	tailReadMax = 8 << 20
	// tailLineMax is the longest partial line kept: a longer one is handed over as it is.
	tailLineMax = 64 << 10
	// auditLineMax is tailLineMax for an audit log, whose events at level Request or above carry
	// whole objects; a longer event is handed over in pieces, none of which is an event.
	auditLineMax = 1 << 20
)

// tailer follows one file by path across polls, like `tail -F`: it reads what was appended since
// the last poll, keeps a partial last line until its newline arrives, and survives rotation (the
// path renamed away and a new file created: the old file is read to its end, then the new one from
// its start) and truncation (the file shorter than what was read: read again from its start).
// A truncation followed by more writes than were read before, between two polls, is not seen.
// A path that is not a regular file (a FIFO, a device) is an error, not followed: opening it
// cannot block and nothing waits on a pipe that never closes (package userfile).
type tailer struct {
	path    string
	f       *os.File
	off     int64
	partial []byte
	polled  bool // a poll has run: files that exist at the first poll are read from their end
	// behind is how much of the file the last poll left unread, at tailReadMax a poll (0: none).
	behind int64
	// lineMax is the longest partial line kept (tailLineMax unless set).
	lineMax int
}

func newTailer(path string) *tailer { return &tailer{path: path, lineMax: tailLineMax} }

// poll returns the complete lines appended since the last poll, without their line ends. A file
// that does not exist (yet, or between a rename and the new file) is not an error.
func (t *tailer) poll() ([]string, error) {
	first := !t.polled
	t.polled = true
	t.behind = 0
	if t.f == nil {
		f, err := userfile.OpenRead(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("follow %s: %w", t.path, err)
		}
		t.f, t.off, t.partial = f, 0, nil
		if first {
			if st, err := f.Stat(); err == nil {
				t.off = st.Size()
			}
		}
	}
	var lines []string
	byName, err := os.Stat(t.path)
	open, oerr := t.f.Stat()
	switch {
	case oerr != nil:
		return nil, fmt.Errorf("follow %s: %w", t.path, oerr)
	case err == nil && !os.SameFile(byName, open):
		// Rotated: what was written to the old file before the rename, then the new file. An
		// old file with more than a poll's worth left is read on at the next poll.
		lines, err = t.read()
		if err != nil || t.behind > 0 {
			return lines, err
		}
		if len(t.partial) > 0 { // its last line ends with it
			lines = append(lines, string(t.partial))
			t.partial = nil
		}
		t.f.Close()
		t.f = nil
		more, err := t.poll()
		return append(lines, more...), err
	case open.Size() < t.off:
		t.off, t.partial = 0, nil // truncated
	}
	return t.read()
}

// read reads the open file from t.off, at most tailReadMax, and sets t.behind to what it left.
func (t *tailer) read() ([]string, error) {
	buf := make([]byte, 64<<10)
	var lines []string
	n := 0
	for n < tailReadMax {
		k, err := t.f.ReadAt(buf[:min(len(buf), tailReadMax-n)], t.off)
		t.off += int64(k)
		n += k
		lines = t.split(buf[:k], lines)
		if err == io.EOF || k == 0 {
			return lines, nil
		}
		if err != nil {
			return lines, fmt.Errorf("follow %s: %w", t.path, err)
		}
	}
	if st, err := t.f.Stat(); err == nil && st.Size() > t.off {
		t.behind = st.Size() - t.off
	}
	return lines, nil
}

// split appends the complete lines of the partial line followed by b, keeping the rest.
func (t *tailer) split(b []byte, lines []string) []string {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.partial = append(t.partial, b...)
			if len(t.partial) > t.lineMax {
				lines = append(lines, string(t.partial))
				t.partial = nil
			}
			return lines
		}
		line := b[:i]
		if len(t.partial) > 0 {
			line = append(t.partial, line...)
			t.partial = nil
		}
		lines = append(lines, string(bytes.TrimSuffix(line, []byte("\r"))))
		b = b[i+1:]
	}
	return lines
}

// close releases the open file.
func (t *tailer) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}
