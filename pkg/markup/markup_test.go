// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package markup

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestWriterEscapesData(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := New(&b)
	w.Open("p", "title", `a "b" <c> & 'd'`)
	w.Text("<script>alert(1)</script> & co")
	w.Textf(" %d%%", 5)
	w.Close("p")
	w.Empty("rect", "x", "1.5", "fill", "#000")
	w.Elem("td", "x<y")
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	want := `<p title="a &#34;b&#34; &lt;c&gt; &amp; &#39;d&#39;">&lt;script&gt;alert(1)&lt;/script&gt; &amp; co 5%</p>` +
		`<rect x="1.5" fill="#000"/><td>x&lt;y</td>`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWriterOddAttributes(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := New(&b)
	w.Open("p", "class")
	if err := w.Err(); err == nil || !strings.Contains(err.Error(), "<p>") {
		t.Fatalf("err = %v, want one naming <p>", err)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

func TestWriterKeepsFirstError(t *testing.T) {
	t.Parallel()
	f := &failWriter{}
	w := New(f)
	w.Raw("<p>")
	w.Text("x")
	w.Close("p")
	if err := w.Err(); err == nil || err.Error() != "disk full" {
		t.Fatalf("err = %v", err)
	}
	if f.n != 1 {
		t.Errorf("%d writes after the first error, want none", f.n-1)
	}
}
