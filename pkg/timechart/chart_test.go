// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package timechart

import (
	"bytes"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/golden"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/markup"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func render(t *testing.T, c *Chart) []byte {
	t.Helper()
	var b bytes.Buffer
	w := markup.New(&b)
	c.WriteSVG(w)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	for name, c := range map[string]*Chart{
		"lanes": {ID: "timeline", Title: "members and rejected trust cells", From: t0, To: at(10),
			Legend: []Key{{Box, OKColour, "ready"}, {Box, WarningColour, "unready"}, {Box, ErrorColour, "down"}},
			Rows: []Row{
				{Label: "apiserver-1", Class: "member", Spans: []Span{
					{From: t0, To: at(4), Colour: OKColour, Title: "ready v1.36.3"},
					{From: at(4), To: at(6), Colour: ErrorColour, Text: "down", Title: "down: dial tcp <refused>"},
				}},
				{Label: "apiserver-2 → apiserver-1", Class: "cell", Indent: true, Spans: []Span{
					{From: at(5), To: at(5), Colour: SeverityColour(catalogue.Error), Text: "signing-key-unknown", Title: "rejected"},
				}},
			}},
		"marks": {Title: "lines per minute", From: t0, To: t0.Add(50 * time.Hour),
			Legend: []Key{{Circle, ErrorColour, "error"}, {Triangle, InfoColour, "info: context event"},
				{Box, UnknownColour, strings.Repeat("a long key that wraps ", 8)}, {Box, CriticalColour, "critical"}},
			Rows: []Row{
				{Label: "cp-1 · signing-key-unknown", Marks: []Mark{{At: at(1), Size: 1, Colour: ErrorColour, Title: "12 lines"}, {At: at(600), Colour: ErrorColour, Title: `1 line "quoted" & <tagged>`}}},
				{Label: "cp-1 · etcd-crashloop", Marks: []Mark{{At: at(2000), Size: 0.5, Colour: InfoColour, Shape: Triangle, Title: "3 lines"}}},
			}},
		"empty": {Title: "nothing"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden.Check(t, filepath.Join("testdata", name+".svg"), render(t, c), *update)
		})
	}
}

// TestEscapes: labels, tooltips, key labels and the title are text, never markup.
func TestEscapes(t *testing.T) {
	t.Parallel()
	bad := `<script>x</script>"'&`
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := string(render(t, &Chart{ID: bad, Title: bad, From: t0, To: t0.Add(time.Hour), Legend: []Key{{Label: bad}},
		Rows: []Row{{Label: bad, Class: bad, Spans: []Span{{From: t0, To: t0, Text: bad, Title: bad, Colour: bad}},
			Marks: []Mark{{At: t0, Title: bad, Colour: bad}}}}}))
	if strings.Contains(out, "<script") || strings.Contains(out, `"'`) {
		t.Errorf("unescaped data in\n%s", out)
	}
	if n := strings.Count(out, "&lt;script&gt;"); n != 11 {
		t.Errorf("%d escaped copies, want 11:\n%s", n, out)
	}
}

func TestPalette(t *testing.T) {
	t.Parallel()
	seen := map[string]catalogue.Severity{}
	for _, s := range []catalogue.Severity{catalogue.Critical, catalogue.Error, catalogue.Warning, catalogue.Info, "bogus"} {
		c := SeverityColour(s)
		if prev, ok := seen[c]; ok {
			t.Errorf("%s and %s share %s", prev, s, c)
		}
		seen[c] = s
	}
	if _, ok := seen[OKColour]; ok {
		t.Error("a severity is drawn in the ok colour")
	}
	for fill, want := range map[string]string{CriticalColour: "#fff", ErrorColour: "#000", WarningColour: "#000", InfoColour: "#fff",
		OKColour: "#000", UnknownColour: "#000", "#000000": "#fff", "#ffffff": "#000", "red": "#000"} {
		if got := Ink(fill); got != want {
			t.Errorf("Ink(%s) = %s, want %s", fill, got, want)
		}
	}
	// Severities must differ in lightness too (readable in grey): at least 0.03 apart in relative
	// luminance, ordered from critical (darkest) to warning.
	prev := -1.0
	for _, c := range []string{CriticalColour, InfoColour, ErrorColour, WarningColour} {
		l, _ := luminance(c)
		if l-prev < 0.03 {
			t.Errorf("%s (luminance %.3f) is too close to the colour before it (%.3f)", c, l, prev)
		}
		prev = l
	}
}
