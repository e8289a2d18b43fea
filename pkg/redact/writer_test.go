// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestWriter(t *testing.T) {
	t.Parallel()
	pem := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
	for _, tc := range []struct {
		name   string
		writes []string
		want   string // after Flush
		secret string // must not appear
	}{
		{"token byte by byte", strings.Split("skipped x: Authorization: Bearer "+jws+"\n", ""),
			"skipped x: Authorization: Bearer " + hdr + "." + claims + "." + Marker + "\n", sig},
		{"token split in two", []string{"a " + jws[:40], jws[40:] + " b\n"}, "a " + hdr + "." + claims + "." + Marker + " b\n", sig},
		{"token broken over two writes", []string{"t=" + jws[:len(jws)-8] + "\n", jws[len(jws)-8:] + " end\n"}, "", sig[len(sig)-8:]},
		{"key over writes", strings.SplitAfter(pem, "\n"), "", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"},
		{"known", []string{"login as u with pw Hunter2x2\n"}, "login as u with pw " + Marker + "\n", "Hunter2x2"},
		{"known escaped", []string{`{"msg":"Hunter2x2\u0021"}` + "\n"}, "", "Hunter2x2"},
		{"clean", []string{"NAME  STATUS\n", "apiserver-1  ok\n", "no newline"}, "NAME  STATUS\napiserver-1  ok\nno newline", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			k := &Known{}
			k.Add("Hunter2x2")
			w := NewWriter(&out, k)
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if tc.want != "" && got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
			if tc.secret != "" && strings.Contains(got, tc.secret) {
				t.Errorf("%q survived: %q", tc.secret, got)
			}
		})
	}
}

// TestWriterProgress: a Write with a '\r' reaches the terminal at once, as a progress bar needs.
func TestWriterProgress(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := NewWriter(&out, nil)
	for i := 0; i < 3; i++ {
		fmt.Fprintf(w, "\r[%d%%]", i*10)
		if want := fmt.Sprintf("[%d%%]", i*10); !strings.HasSuffix(out.String(), want) {
			t.Fatalf("after bar %d: %q, want it to end in %q", i, out.String(), want)
		}
	}
	if fmt.Fprint(w, "half a line"); strings.Contains(out.String(), "half") {
		t.Errorf("a partial line was written before its end: %q", out.String())
	}
}

// TestThrough: a Writer is not wrapped twice.
func TestThrough(t *testing.T) {
	t.Parallel()
	w := NewWriter(&bytes.Buffer{}, nil)
	if Through(w) != w {
		t.Error("Through wrapped a Writer again")
	}
	if Through(&bytes.Buffer{}) == nil {
		t.Error("Through of a buffer is nil")
	}
}

// TestKnownConcurrent: secrets are added while lines are written (run with -race).
func TestKnownConcurrent(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	k := &Known{}
	w := NewWriter(&out, k)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); k.Add(fmt.Sprintf("secret-%d-value", i)) }()
		go func() { defer wg.Done(); fmt.Fprintf(w, "line %d\n", i) }()
	}
	wg.Wait()
	k.Add("secret-0-value")
	fmt.Fprintln(w, "has secret-0-value and secret-3-value")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "-value") {
		t.Errorf("a known secret survived: %q", out.String())
	}
	if (*Known)(nil).Redact("x") != "x" {
		t.Error("a nil Known changed text")
	}
}
