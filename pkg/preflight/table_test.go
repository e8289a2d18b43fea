// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/credwatch/credwatch/internal/golden"
	"github.com/credwatch/credwatch/internal/gridtest"
	"github.com/credwatch/credwatch/pkg/report"
)

// TestTableTrustWhole: the trust after each step is the verdict, and is never cut: whole on one
// line into a file or with -o wide, wrapped within its column on a terminal as narrow as 80
// columns. An issuer every step shares (what the lines above the table say) is -o wide's.
func TestTableTrustWhole(t *testing.T) {
	for _, tc := range []struct {
		dir        string
		o          report.TableOptions
		wantIssuer bool
		golden     string // the output at this width, to read by eye
	}{
		{"kcp-issuer-switch", report.TableOptions{Width: 80}, false, "kcp-issuer-switch.80.txt"},
		{"kcp-issuer-switch", report.TableOptions{}, false, ""},
		{"kcp-issuer-switch", report.TableOptions{Wide: true, Width: 80}, true, ""},
		{"static-key-legacy", report.TableOptions{Width: 80}, false, "static-key-legacy.80.txt"},
		{"static-key-legacy", report.TableOptions{Width: 120}, false, ""},
		{"kops-switch", report.TableOptions{Width: 80}, false, ""},
		{"kubeadm-join-differs", report.TableOptions{}, false, ""},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			r := run(t, filepath.Join("testdata", tc.dir), "")
			var b bytes.Buffer
			if err := r.WriteTable(&b, tc.o); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if strings.Contains(out, "…") {
				t.Errorf("a cell was cut:\n%s", out)
			}
			rows := tableLines(out)
			trust := gridtest.Column(rows, "TRUST AFTER THE STEP")
			for _, s := range r.Steps {
				want := "all accept all"
				if len(s.Rejects) > 0 {
					want = strings.Join(s.Rejects, "; ")
				}
				if !strings.Contains(trust, want) {
					t.Errorf("step %d: trust %q not whole in the column %q:\n%s", s.N, want, trust, out)
				}
			}
			if tc.o.Width > 0 && !tc.o.Wide {
				for _, l := range rows {
					if n := utf8.RuneCountInString(l); n > tc.o.Width {
						t.Errorf("table line of %d columns at width %d: %q", n, tc.o.Width, l)
					}
				}
			}
			if got := strings.Contains(rows[0], "ISSUER"); got != tc.wantIssuer {
				t.Errorf("ISSUER column shown: %v, want %v:\n%s", got, tc.wantIssuer, out)
			}
			if tc.golden != "" {
				golden.Check(t, filepath.Join("testdata", "golden", tc.golden), b.Bytes(), *update)
			}
		})
	}
}

// tableLines are the lines of the steps table: from its header to the blank line after it.
func tableLines(out string) []string {
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "STEP ") {
			rows = append(rows, l)
			continue
		}
		if len(rows) > 0 {
			if l == "" {
				break
			}
			rows = append(rows, l)
		}
	}
	return rows
}
