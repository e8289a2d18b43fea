// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package markup

import (
	"fmt"
	"html"
	"io"
)

// Writer writes markup to an io.Writer. The first write error sticks: later writes do nothing
// and Err returns it.
type Writer struct {
	w   io.Writer
	err error
}

// New returns a Writer on w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Err is the first error a write returned.
func (w *Writer) Err() error { return w.err }

func (w *Writer) write(s string) {
	if w.err == nil {
		_, w.err = io.WriteString(w.w, s)
	}
}

// Raw writes s as it is: markup that is a constant of the program, never data.
func (w *Writer) Raw(s string) { w.write(s) }

// Text writes s escaped, for the text of an element or a quoted attribute value.
func (w *Writer) Text(s string) { w.write(html.EscapeString(s)) }

// Textf writes fmt.Sprintf(format, args...) escaped.
func (w *Writer) Textf(format string, args ...any) { w.Text(fmt.Sprintf(format, args...)) }

// Open writes a start tag. attrs are name, value pairs: the names are constants of the
// program, the values are escaped.
func (w *Writer) Open(tag string, attrs ...string) {
	w.write("<" + tag)
	w.attrs(tag, attrs)
	w.write(">")
}

// Empty writes an element that has no content, such as an SVG shape: <tag attrs/>.
func (w *Writer) Empty(tag string, attrs ...string) {
	w.write("<" + tag)
	w.attrs(tag, attrs)
	w.write("/>")
}

// Close writes an end tag.
func (w *Writer) Close(tag string) { w.write("</" + tag + ">") }

// Elem writes <tag attrs>text</tag>, text escaped.
func (w *Writer) Elem(tag, text string, attrs ...string) {
	w.Open(tag, attrs...)
	w.Text(text)
	w.Close(tag)
}

func (w *Writer) attrs(tag string, attrs []string) {
	if len(attrs)%2 != 0 && w.err == nil {
		w.err = fmt.Errorf("markup: <%s> has an attribute without a value: %q", tag, attrs)
		return
	}
	for i := 0; i < len(attrs); i += 2 {
		w.write(" " + attrs[i] + `="`)
		w.Text(attrs[i+1])
		w.write(`"`)
	}
}
