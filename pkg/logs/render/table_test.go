// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/gridtest"
	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/report"
)

// TestTableEvidenceWhole: a log line is the evidence that names the cause (square/go-jose's
// "error in cryptographic primitive"), and an unknown error's text is all there is to read: both
// are whole into a file, with -o wide and on a terminal as narrow as 80 columns, where they wrap.
func TestTableEvidenceWhole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		year int
		o    report.TableOptions
	}{
		{"seed-000", 2022, report.TableOptions{Width: 80}},
		{"seed-000", 2022, report.TableOptions{}},
		{"seed-000", 2022, report.TableOptions{Wide: true, Width: 80}},
		{"mixed", 2026, report.TableOptions{Width: 80}},
		{"field-mixed", 2026, report.TableOptions{Width: 80}},
		{"field-mixed", 2026, report.TableOptions{Width: 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := analyzeFiles(t, logs.Config{Year: tc.year, Workers: 2}, filepath.Join("testdata", tc.name+".log"))
			var b bytes.Buffer
			if err := New(r).WriteTable(&b, tc.o); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			words := strings.Join(strings.Fields(out), " ")
			shown := 0
			for _, h := range r.Verdict {
				for i, ev := range h.Evidence {
					if i == 2 {
						break
					}
					shown++
					if want := strings.Join(strings.Fields(ev.Line), " "); !strings.Contains(words, want) {
						t.Errorf("evidence %s:%d is not whole: %q\n%s", ev.Input, ev.LineNumber, want, out)
					}
				}
			}
			if shown == 0 {
				t.Fatalf("no evidence in %s", tc.name)
			}
			if tc.name == "seed-000" && !strings.Contains(words, "square/go-jose: error in cryptographic primitive") {
				t.Errorf("the message that names the cause is cut:\n%s", out)
			}
			if len(r.Unknown) > 0 {
				text := textColumn(out)
				for _, u := range r.Unknown {
					if !strings.Contains(text, u.Text) {
						t.Errorf("unknown text %q is not whole in %q:\n%s", u.Text, text, out)
					}
				}
			}
		})
	}
}

// textColumn is the TEXT column of the unknown errors' table.
func textColumn(out string) string {
	_, table, _ := strings.Cut(out, "\nUNKNOWN CREDENTIAL ERRORS")
	table, _, _ = strings.Cut(table, "\n\n")
	return gridtest.Column(strings.Split(table, "\n")[1:], "TEXT")
}
