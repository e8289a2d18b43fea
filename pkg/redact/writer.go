// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"unsafe"
)

// maxPending bounds what a Writer holds back waiting for the end of a line.
const maxPending = 1 << 20

// Writer redacts everything written through it (Text, then the Known secrets) before it reaches
// the writer it wraps. It redacts whole lines, so that no token is split across two Writes and
// missed: a line is held until its '\n' (or until Flush or Close), a Write with a '\r' is passed
// on at once (a progress bar redraws), and a private key block or a token broken at a line's
// end is held until the lines that finish it arrive. Lines with nothing to redact pass through
// as they are. It is safe for concurrent use.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	known *Known
	buf   []byte
	// quote: what is written is text for a terminal, and Printable quotes its control and
	// format characters after redaction (NewTextWriter).
	quote bool
}

// NewWriter returns a Writer around w that also takes out known's secrets (known may be nil).
func NewWriter(w io.Writer, known *Known) *Writer { return &Writer{w: w, known: known} }

// NewTextWriter is NewWriter for text people read on a terminal (stderr's diagnostics): what
// it writes on is also Printable, so that no escape sequence, carriage return, NUL or bidi
// override in a message (a server's echo, a hostile issuer) acts on the terminal. The writer's
// owner draws its own cursor moves and erasures with Control.
func NewTextWriter(w io.Writer, known *Known) *Writer {
	return &Writer{w: w, known: known, quote: true}
}

// Control writes seq, a terminal sequence of the program's own (a progress bar's "\r", a
// redraw's clear screen), to w as it is, after what w holds back; when w is not a Writer,
// straight to w. It is never for data.
func Control(w io.Writer, seq string) error {
	rw, ok := w.(*Writer)
	if !ok {
		_, err := io.WriteString(w, seq)
		return err
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	err := rw.emit(rw.buf)
	rw.buf = rw.buf[:0]
	if err != nil {
		return err
	}
	_, err = io.WriteString(rw.w, seq)
	return err
}

// Through returns w when it is a Writer already (its redaction is not done twice), else a new
// Writer around w that the caller must Flush.
func Through(w io.Writer) *Writer {
	if rw, ok := w.(*Writer); ok {
		return rw
	}
	return NewWriter(w, nil)
}

// Unwrap is the writer w wraps (to ask whether it is a terminal).
func (w *Writer) Unwrap() io.Writer { return w.w }

// Write redacts the complete lines of what it has been given and writes them on.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	force := bytes.IndexByte(p, '\r') >= 0
	data := p
	if len(w.buf) > 0 || !force && (len(p) == 0 || p[len(p)-1] != '\n') {
		w.buf = append(w.buf, p...)
		data = w.buf
	}
	end := len(data)
	if !force && len(data) < maxPending {
		end = bytes.LastIndexByte(data, '\n') + 1
		end = holdFrom(data[:end])
	}
	if w.quote {
		end -= incompleteRune(data[:end])
	}
	if err := w.emit(data[:end]); err != nil {
		w.buf = w.buf[:0]
		return 0, err
	}
	rest := data[end:]
	if len(w.buf) > 0 || len(rest) > 0 {
		w.buf = append(w.buf[:0], rest...) // copy within: rest is a tail of buf or of p
	}
	return len(p), nil
}

// Flush redacts and writes on what is held back.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.emit(w.buf)
	w.buf = w.buf[:0]
	return err
}

// Close flushes; the wrapped writer stays open.
func (w *Writer) Close() error { return w.Flush() }

// emit redacts b and writes it on.
func (w *Writer) emit(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	s := unsafe.String(unsafe.SliceData(b), len(b)) // b is not changed until it is written
	r := w.known.Redact(Text(s))
	if w.quote {
		r = Printable(r)
	}
	var err error
	if r == s {
		_, err = w.w.Write(b)
	} else {
		_, err = io.WriteString(w.w, r)
	}
	return err
}

// holdFrom is where the lines in b (which ends a line, or is empty) stop being complete: at an
// unterminated private key block, or at a last line that ends in what may be a token broken
// over two lines.
func holdFrom(b []byte) int {
	if bytes.Contains(b, []byte("PRIVATE KEY")) { // Index is fast; LastIndex is not
		i := bytes.LastIndex(b, []byte("PRIVATE KEY"))
		if begin := bytes.LastIndex(b[:i], []byte("-----BEGIN ")); begin >= 0 && !bytes.Contains(b[begin:], []byte("-----END ")) {
			return bytes.LastIndexByte(b[:begin], '\n') + 1
		}
	}
	if len(b) < 2 {
		return len(b)
	}
	last := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
	line := strings.TrimRight(unsafe.String(unsafe.SliceData(b[last:]), len(b)-last), "\r\n")
	lo := len(line)
	for lo > 0 && runByte[line[lo-1]] {
		lo--
	}
	if lo < len(line) && strings.Contains(line[lo:], "eyJ") { // also a header cut before its dot
		return last
	}
	return len(b)
}
