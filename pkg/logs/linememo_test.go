package logs

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
	"github.com/credwatch/credwatch/pkg/logs/envelope"
	"github.com/credwatch/credwatch/pkg/logs/internal/loggen"
	"github.com/credwatch/credwatch/pkg/report"
)

// TestLineMemo checks that the line memo changes nothing in a report: the lab's captures, the
// golden inputs and a generated incident give the same -o json with it and without it, and the
// generated incident's lines are mostly memo hits.
func TestLineMemo(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "lab", "*", "*", "*.log"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("lab captures: %v", err)
	}
	paths = append(paths, filepath.Join("testdata", "seed-000.log"), filepath.Join("testdata", "mixed.log"),
		filepath.Join("testdata", "field-mixed.log"))
	var gen bytes.Buffer
	if _, _, err := loggen.Write(&gen, loggen.Options{Bytes: 8 << 20, AuthShare: 0.2, Seed: 13}); err != nil {
		t.Fatal(err)
	}
	for _, ts := range []string{"09:00:00.000000", "09:00:01.500000", "09:01:02.000001"} { // unattributed, remembered
		gen.WriteString("E1129 " + ts + "       1 authentication.go:75] \"Unable to authenticate the request\" err=\"[invalid bearer token, a message nobody has seen]\"\n")
		gen.WriteString("2026-11-29T" + ts[:8] + "Z stderr F W1129 " + ts + "       1 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"\n")
	}
	genPath := filepath.Join(t.TempDir(), "kube-apiserver.log")
	if err := os.WriteFile(genPath, gen.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	paths = append(paths, genPath)
	render := func(cfg Config) string {
		var b bytes.Buffer
		if err := report.Print(&b, report.JSON, analyzeFiles(t, cfg, paths...)); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	since := time.Date(2026, 11, 29, 8, 30, 0, 0, time.UTC)
	for _, cfg := range []Config{{Year: 2026, Workers: 2}, {Year: 2026, Workers: 1, Since: since}, {Workers: 3, BlockSize: 64 << 10}} {
		on := render(cfg)
		cfg.noLineMemo = true
		if off := render(cfg); on != off {
			t.Errorf("workers %d: the line memo changes the report:\n%s", cfg.Workers, firstDiff(on, off))
		}
	}
	// The generated incident's lines, of every format, hit the memo.
	w := newTestWorker()
	st := &inputState{Input: Input{Name: "gen"}}
	st.lc = lineContext{ref: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	hits, lines := 0, 0
	for _, l := range strings.Split(gen.String(), "\n") {
		if !strings.Contains(l, "Unable to authenticate") {
			continue
		}
		lines++
		lc := st.lc
		lc.clock = &w.clock
		if _, _, ok := w.lines.lookup(st, l, lc); ok {
			hits++
		}
		w.line(st, []byte(l), true, int64(lines), 0)
	}
	if lines < 1000 || hits < lines*9/10 {
		t.Errorf("line memo: %d hits of %d lines", hits, lines)
	}
}

func newTestWorker() *worker {
	cat := catalogue.Default()
	return &worker{cl: cause.NewClassifier(cat), agg: newAggregator(6)}
}

// lineOutcome is what worker.line did with a line.
type lineOutcome struct {
	Matched         int64
	Event           Event
	Formats         []string
	Host, Component string
	OwnHosts        bool
}

func runLine(w *worker, st *inputState, line string) lineOutcome {
	before := w.matched
	w.ev = Event{}
	w.line(st, []byte(line), false, 7, 0)
	o := lineOutcome{Matched: w.matched - before, Formats: append([]string(nil), w.formats...), Host: w.lastHost,
		Component: w.lastComponent, OwnHosts: st.ownHosts.Load()}
	if o.Matched > 0 {
		o.Event = w.ev
		o.Event.in, o.Event.lent = nil, false
	}
	return o
}

// FuzzLineMemo checks the line memo on any pair of lines: line b read after line a (which the
// memo may remember) has the outcome b has in a worker that never saw a.
func FuzzLineMemo(f *testing.F) {
	var gen bytes.Buffer
	if _, _, err := loggen.Write(&gen, loggen.Options{Bytes: 64 << 10, AuthShare: 0.5, Seed: 3}); err != nil {
		f.Fatal(err)
	}
	var prev string
	for _, l := range strings.Split(gen.String(), "\n") {
		if strings.Contains(l, "Unable to authenticate") {
			if prev != "" {
				f.Add(prev, l)
			}
			f.Add(l, strings.ReplaceAll(l, "08:0", "08:4"))
			f.Add(l, strings.NewReplacer("T08", "T09", "1129 08", "1231 09").Replace(l))
			f.Add(l, strings.NewReplacer("Z", "0Z", ".0", ".").Replace(l))
			prev = l
		}
	}
	f.Add("E1129 08:00:00.000000       1 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"",
		"E1129 08:00:00.000000       2 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"")
	f.Add("2026-11-29T08:00:00.1Z stderr F E1129 08:00:00.000000       1 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"",
		"2026-11-29T08:00:00.12Z stderr F E1129 08:00:00.000000       1 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"")
	for _, c := range memoEdgeCases {
		f.Add(c.a, c.b)
	}
	ref := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsAny(a+b, "\n") {
			return
		}
		memo, plain := newTestWorker(), newTestWorker()
		stm, stp := &inputState{Input: Input{Name: "x"}}, &inputState{Input: Input{Name: "x"}}
		stm.lc = lineContext{host: "h", ref: ref}
		stp.lc = stm.lc
		plain.lines.off = true
		runLine(memo, stm, a)
		runLine(plain, stp, a)
		got, want := runLine(memo, stm, b), runLine(plain, stp, b)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after %q, %q:\nmemo:  %+v\nplain: %+v", a, b, got, want)
		}
	})
}

// TestKlogTokenTime checks klogTokenTime against envelope.KlogHeader on headers whose times are
// changed byte by byte: wherever it accepts one, envelope.KlogHeader reads the same time.
func TestKlogTokenTime(t *testing.T) {
	t.Parallel()
	base := "E1129 08:16:43.535948       1 authentication.go:75] \"Unable to authenticate the request\""
	accepted := 0
	check := func(s string) {
		got, ok := klogTokenTime(s)
		want, wantOK := envelope.KlogHeader(s)
		if !ok {
			return
		}
		accepted++
		if !wantOK || got.Month != want.Month || got.Day != want.Day || got.HH != want.HH || got.MM != want.MM ||
			got.SS != want.SS || got.US != want.US {
			t.Fatalf("%q: klogTokenTime %+v, envelope.KlogHeader %+v %v", s, got, want, wantOK)
		}
	}
	for i := 1; i < 25; i++ {
		for _, c := range []byte("0159.: aZ\x00") {
			b := []byte(base)
			b[i] = c
			check(string(b))
		}
	}
	for _, s := range []string{base, strings.Replace(base, ".535948", "", 1), strings.Replace(base, ".535948", ".5", 1),
		strings.Replace(base, ".535948", ".123456789012345678", 1), strings.Replace(base, ".535948", ".1234567890123456789", 1)} {
		check(s)
	}
	if accepted < 20 {
		t.Errorf("klogTokenTime accepted %d headers; the unchanged one and most digit changes read", accepted)
	}
}

// memoEdgeCases are pairs of lines a review of the line memo found it read otherwise than the
// full path (TestLineMemoEdges); FuzzLineMemo starts from them too.
var memoEdgeCases = []struct{ name, a, b string }{
	{"Docker: an escape right after an 18-digit fraction",
		`{"log":"E1129 08:00:00.123456789012345678\u0039 1 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"\n","stream":"stderr","time":"x"}`,
		`{"log":"E1129 08:00:00.5\u0039 1 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"\n","stream":"stderr","time":"xxxxxxxxxxxxxxxxxx"}`},
	{"Docker: a time with a JSON escape",
		`{"log":"E1129 08:00:00.000000 1 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"\n","stream":"stderr","time":"2026-11-29T08:00:00.456789Z"}`,
		`{"log":"E1129 08:00:00.000000 1 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"\n","stream":"stderr","time":"2026-11-30T09:00:00\u002e5Z"}`},
	{"Docker: a time with a colour sequence",
		`{"log":"E1129 08:00:00.000000 1 authentication.go:75] \"Unable to authenticate the request\" err=\"invalid bearer token\"\n","stream":"stderr","time":"2026-11-29T08:00:00.45678Z"}`,
		"{\"log\":\"E1129 08:00:00.000000 1 authentication.go:75] \\\"Unable to authenticate the request\\\" err=\\\"invalid bearer token\\\"\\n\",\"stream\":\"stderr\",\"time\":\"2026-11-30T09:00:00\x1b[0m.5Z\"}"},
	{"a cut JSON line's time (the same line twice)",
		`{"time":"2026-06-15T10:00:00.5Z","log":"E1129 08:00:00.000000 1 authentication.go:75] Unable to authenticate the request: invalid bearer token","stream":"std`,
		`{"time":"2026-06-15T10:00:00.5Z","log":"E1129 08:00:00.000000 1 authentication.go:75] Unable to authenticate the request: invalid bearer token","stream":"std`},
	{"a cut JSON line with CRI inside",
		`{"time":"2026-06-15T10:00:00.5Z","log":"2026-11-29T08:00:00.1Z stderr F E1129 08:00:00.000000 1 authentication.go:75] Unable to authenticate the request: invalid bearer token","stream":"std`,
		`{"time":"2026-06-15T10:00:00.5Z","log":"2026-11-29T08:00:00.1Z stderr F E1129 08:00:00.000000 1 authentication.go:75] Unable to authenticate the request: invalid bearer token","stream":"std`},
	{"Docker in Docker, the inner time read by reflection",
		`{"log":"{\"time\":\"2026-06-15T10:00:00.5Z\",\"log\":\"Unable to authenticate the request: invalid bearer token\"}\n","time":"x"}`,
		`{"log":"{\"time\":\"2026-06-15T10:00:00.5Z\",\"log\":\"Unable to authenticate the request: invalid bearer token\"}\n","time":"y"}`},
}

// TestLineMemoEdges has the lines a review of the line memo found it read otherwise than the
// full path (times the recorder did not see, escapes and colour in a Docker time, an escape
// after a klog fraction in a Docker value): the second line of each pair, read after the first,
// must have the outcome it has without the memo.
func TestLineMemoEdges(t *testing.T) {
	t.Parallel()
	ref := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range memoEdgeCases {
		memo, plain := newTestWorker(), newTestWorker()
		stm, stp := &inputState{Input: Input{Name: "x"}}, &inputState{Input: Input{Name: "x"}}
		stm.lc = lineContext{host: "h", ref: ref}
		stp.lc = stm.lc
		plain.lines.off = true
		for _, l := range []string{c.a, c.b} {
			if got, want := runLine(memo, stm, l), runLine(plain, stp, l); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %q:\nmemo:  %+v\nplain: %+v", c.name, l, got, want)
			}
		}
	}
}
