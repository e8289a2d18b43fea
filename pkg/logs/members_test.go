// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/credwatch/credwatch/pkg/logs/internal/loggen"
	"github.com/credwatch/credwatch/pkg/report"
)

// plainReport is Report without its methods: report.Print encodes it with encoding/json alone.
type plainReport Report

// TestJSONMembers checks that -o json of a report, whose members report.Print encodes
// concurrently (Report.JSONMembers), is the encoding of the struct: on the golden inputs, a
// generated incident, a report with unattributed lines and an empty one.
func TestJSONMembers(t *testing.T) {
	t.Parallel()
	reports := map[string]*Report{"empty": {}}
	for _, name := range []string{"seed-000", "mixed", "field-mixed"} {
		reports[name] = analyzeFiles(t, Config{Year: 2026, Workers: 2}, filepath.Join("testdata", name+".log"))
	}
	var gen bytes.Buffer
	if _, _, err := loggen.Write(&gen, loggen.Options{Bytes: 4 << 20, AuthShare: 0.05, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	gen.WriteString("E1129 09:00:00.000000       1 authentication.go:75] \"Unable to authenticate the request\" err=\"[invalid bearer token, a message nobody has seen]\"\n")
	in := Input{Name: "gen", Host: "gen", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gen.Bytes())), nil }}
	r, err := Analyze(context.Background(), Config{Year: 2026}, []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Unknown) == 0 || len(r.Failures) < 5 {
		t.Fatalf("generated report: %d unknown texts, %d failure groups; want some of both", len(r.Unknown), len(r.Failures))
	}
	reports["generated"] = r
	for name, r := range reports {
		var got, want bytes.Buffer
		if err := report.Print(&got, report.JSON, r); err != nil {
			t.Fatal(err)
		}
		if err := report.Print(&want, report.JSON, (*plainReport)(r)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: JSONMembers wrote %d bytes that differ from the struct's %d:\n%s", name, got.Len(), want.Len(), firstDiff(got.String(), want.String()))
		}
	}
}

// firstDiff shows where two texts part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(i-80, 0)
	return "got:  …" + a[lo:min(i+80, len(a))] + "\nwant: …" + b[lo:min(i+80, len(b))]
}
