// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTailer(t *testing.T) {
	type step struct {
		do   func(t *testing.T, path string)
		want []string
	}
	write := func(s string) func(*testing.T, string) {
		return func(t *testing.T, path string) { appendFile(t, path, s) }
	}
	nothing := func(*testing.T, string) {}
	rotate := func(s string) func(*testing.T, string) {
		return func(t *testing.T, path string) {
			if err := os.Rename(path, path+".1"); err != nil {
				t.Fatal(err)
			}
			appendFile(t, path+".1", s) // written after the rename, before the writer reopens
		}
	}
	truncate := func(t *testing.T, path string) {
		if err := os.Truncate(path, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		existing string // "" : the file does not exist at the first poll
		steps    []step
	}{
		{"existing file is read from its end", "old 1\nold 2\n", []step{
			{nothing, nil},
			{write("new 1\nnew 2\n"), []string{"new 1", "new 2"}},
		}},
		{"file created after the first poll is read from its start", "", []step{
			{nothing, nil},
			{write("a\nb\n"), []string{"a", "b"}},
			{nothing, nil},
		}},
		{"partial lines wait for their newline", "x\n", []step{
			{nothing, nil},
			{write("par"), nil},
			{write("tial\r\nnext"), []string{"partial"}},
			{write("\n"), []string{"next"}},
		}},
		{"rotation: rest of the old file, then the new one", "x\n", []step{
			{nothing, nil},
			{write("before\n"), []string{"before"}},
			{rotate("late in old\ncut"), []string{"late in old"}}, // no new file yet: the old one is still followed
			{write("in new\n"), []string{"cut", "in new"}},        // its last line ends with it
			{rotate("old again\n"), []string{"old again"}},
			{write("newest\n"), []string{"newest"}},
		}},
		{"rotation and new file between two polls", "x\n", []step{
			{nothing, nil},
			{func(t *testing.T, path string) { rotate("last old\n")(t, path); appendFile(t, path, "first new\n") },
				[]string{"last old", "first new"}},
		}},
		{"truncation: read again from the start", "x\n", []step{
			{nothing, nil},
			{write("a long line before truncation\npart"), []string{"a long line before truncation"}},
			{func(t *testing.T, path string) { truncate(t, path); appendFile(t, path, "after\n") }, []string{"after"}},
			{write("more\n"), []string{"more"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "apiserver.log")
			if tc.existing != "" {
				appendFile(t, path, tc.existing)
			}
			tl := newTailer(path)
			defer tl.close()
			for i, s := range tc.steps {
				s.do(t, path)
				got, err := tl.poll()
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if !slices.Equal(got, s.want) {
					t.Errorf("step %d: lines %q, want %q", i, got, s.want)
				}
			}
		})
	}
}

func TestTailerLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	tl := newTailer(path)
	tl.poll()
	long := make([]byte, tailLineMax+10)
	for i := range long {
		long[i] = 'a'
	}
	appendFile(t, path, string(long))
	got, err := tl.poll()
	if err != nil || len(got) != 1 || len(got[0]) != len(long) {
		t.Fatalf("a line longer than %d without newline: %d lines, %v", tailLineMax, len(got), err)
	}
}

const (
	keyDriftLine = `E1129 22:30:25.561362   19589 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, square/go-jose: error in cryptographic primitive]"`
	infoLine     = `I1129 22:30:25.561362   19589 controller.go:12] "Starting controller" name="x"`
)

func TestLogCauses(t *testing.T) {
	dir := t.TempDir()
	p2, p3 := filepath.Join(dir, "apiserver-2.log"), filepath.Join(dir, "apiserver-3.log")
	appendFile(t, p2, keyDriftLine+"\n") // before watch started: not read
	lc := newLogCauses([]LogFile{{"apiserver-2", p2}, {"apiserver-3", p3}}, 10*time.Second)
	defer lc.close()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	if got := lc.poll(at(0), nil); len(got) != 0 {
		t.Fatalf("lines before the start: %+v", got)
	}
	appendFile(t, p3, infoLine+"\n"+keyDriftLine+"\n"+keyDriftLine+"\n")
	got := lc.poll(at(2), nil)
	if len(got) != 1 || got[0].Member != "apiserver-3" || got[0].ID != "signing-key-unknown" || got[0].Lines != 2 || !got[0].Since.Equal(at(2)) {
		t.Fatalf("log causes %+v, want signing-key-unknown on apiserver-3 from 2 lines", got)
	}
	if got[0].Source != p3 || got[0].Line != keyDriftLine {
		t.Errorf("evidence %q from %q", got[0].Line, got[0].Source)
	}
	appendFile(t, p3, keyDriftLine+"\n")
	if got := lc.poll(at(8), nil); len(got) != 1 || got[0].Lines != 3 || !got[0].Since.Equal(at(2)) || !got[0].Last.Equal(at(8)) {
		t.Fatalf("still active: %+v", got)
	}
	if got := lc.poll(at(17), nil); len(got) != 1 {
		t.Fatalf("quiet for 9 s of 10: %+v", got)
	}
	if got := lc.poll(at(18), nil); len(got) != 0 {
		t.Fatalf("quiet for 10 s: %+v, want cleared", got)
	}
}

// TestLogCauseWrappedToken: a line whose token is cut off at its end puts the token's rest at
// the start of the next line, the line watch keeps as evidence; the rest is not shown, whether
// the two lines are read in one poll or in two.
func TestLogCauseWrappedToken(t *testing.T) {
	var b strings.Builder
	for i := range 8 {
		b.WriteString(redacttest.Marker([]byte{byte(i), 'c'}, 43))
	}
	sig := b.String()
	tok := redacttest.JWS(sig)
	const cut = 30
	first := `I1129 22:30:25.561362   19589 round_trippers.go:553] Authorization: Bearer ` + tok[:cut]
	second := tok[cut:] + ` ` + keyDriftLine
	for _, polls := range []int{1, 2} {
		path := filepath.Join(t.TempDir(), "apiserver.log")
		appendFile(t, path, "")
		lc := newLogCauses([]LogFile{{"apiserver-1", path}}, 10*time.Second)
		t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		lc.poll(t0, nil)
		if polls == 2 {
			appendFile(t, path, first+"\n")
			lc.poll(t0.Add(time.Second), nil)
			appendFile(t, path, second+"\n")
		} else {
			appendFile(t, path, first+"\n"+second+"\n")
		}
		got := lc.poll(t0.Add(2*time.Second), nil)
		lc.close()
		if len(got) != 1 || got[0].ID != "signing-key-unknown" {
			t.Fatalf("%d polls: log causes %+v, want signing-key-unknown", polls, got)
		}
		for i := 0; i+8 <= len(sig); i++ {
			if strings.Contains(got[0].Line, sig[i:i+8]) {
				t.Fatalf("%d polls: the signature's %q is in the evidence %q", polls, sig[i:i+8], got[0].Line)
			}
		}
	}
}

func TestDiffLogCauses(t *testing.T) {
	c := LogCause{Member: "apiserver-3", ID: "signing-key-unknown", Lines: 2, Line: keyDriftLine, Source: "x.log"}
	prev := &State{Interval: 1}
	cur := &State{Interval: 2, LogCauses: []LogCause{c}}
	ev := Diff(prev, cur)
	if len(ev) != 1 || ev[0].Kind != LogCauseAppeared || ev[0].ID != c.ID || ev[0].Member != c.Member || ev[0].Severity == "" ||
		len(ev[0].Evidence) != 1 || ev[0].Evidence[0].Value != keyDriftLine {
		t.Fatalf("appeared: %+v", ev)
	}
	if ev := Diff(cur, &State{Interval: 3, LogCauses: []LogCause{c}}); len(ev) != 0 {
		t.Fatalf("unchanged: %+v", ev)
	}
	ev = Diff(cur, &State{Interval: 3})
	if len(ev) != 1 || ev[0].Kind != LogCauseCleared || ev[0].ID != c.ID || ev[0].Member != c.Member {
		t.Fatalf("cleared: %+v", ev)
	}
}

func TestParseLogFile(t *testing.T) {
	if lf, err := ParseLogFile("apiserver-2=/tmp/a=b.log"); err != nil || lf != (LogFile{"apiserver-2", "/tmp/a=b.log"}) {
		t.Errorf("got %+v, %v", lf, err)
	}
	for _, bad := range []string{"", "host", "=path", "host="} {
		if _, err := ParseLogFile(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A poll reads at most tailReadMax and says how much it left; the next poll reads on. A file
// rotated while behind is read to its end before the new one.
func TestTailerBehind(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "log")
	appendFile(t, path, "")
	tl := newTailer(path)
	defer tl.close()
	if _, err := tl.poll(); err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 1023) + "\n" // 1 KiB
	const lines = tailReadMax/1024 + 512     // 8.5 MiB
	appendFile(t, path, strings.Repeat(line, lines))
	got, err := tl.poll()
	if err != nil || len(got) != tailReadMax/1024 || tl.behind != 512*1024 {
		t.Fatalf("first poll: %d lines, behind %d, %v; want %d lines, behind %d", len(got), tl.behind, err, tailReadMax/1024, 512*1024)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, "first new\n")
	got, err = tl.poll()
	if err != nil || len(got) != 513 || got[511] != line[:1023] || got[512] != "first new" || tl.behind != 0 {
		t.Fatalf("second poll: %d lines (last %q), behind %d, %v; want the old file's last 512 lines, then the new one's", len(got), got[len(got)-1], tl.behind, err)
	}
}

func TestDiffLogBehind(t *testing.T) {
	t.Parallel()
	b := LogBehind{Member: "apiserver-2", Path: "/var/log/apiserver-2.log", Bytes: 3 << 20}
	for _, tt := range []struct {
		name      string
		prev, cur []LogBehind
		want      Kind
	}{
		{"fell behind", nil, []LogBehind{b}, LogFileBehind},
		{"still behind", []LogBehind{b}, []LogBehind{{Member: b.Member, Path: b.Path, Bytes: 1}}, ""},
		{"caught up", []LogBehind{b}, nil, LogFileCaughtUp},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev := Diff(&State{Interval: 1, LogBehind: tt.prev}, &State{Interval: 2, LogBehind: tt.cur})
			if tt.want == "" {
				if len(ev) != 0 {
					t.Fatalf("events %+v, want none", ev)
				}
				return
			}
			if len(ev) != 1 || ev[0].Kind != tt.want || ev[0].Member != b.Member || !strings.Contains(ev[0].Message, b.Path) {
				t.Fatalf("events %+v, want one %s naming %s", ev, tt.want, b.Path)
			}
			if tt.want == LogFileBehind && (ev[0].Severity != catalogue.Warning || !strings.Contains(ev[0].Message, "3.0 MiB unread")) {
				t.Errorf("behind: %+v", ev[0])
			}
		})
	}
}
