// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/logs/render"
	"github.com/credwatch/credwatch/pkg/report"
)

// ownOutputs are credwatch's own outputs of a report on seed-000, as it writes them.
func ownOutputs(t *testing.T) map[string][]byte {
	t.Helper()
	files := logs.FileInputs(context.Background(), []string{"testdata/seed-000.log"}, strings.NewReader(""), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), logs.FileSelect{})
	r, err := logs.Analyze(context.Background(), logs.Config{Year: 2022}, files.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for name, f := range map[string]report.Format{"report.json": report.JSON, "report.yaml": report.YAML, "results.sarif": report.SARIF} {
		var b bytes.Buffer
		if err := report.Print(&b, f, render.New(r)); err != nil {
			t.Fatal(err)
		}
		out[name] = b.Bytes()
	}
	var page bytes.Buffer
	if err := render.New(r).WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	out["roll.html"] = page.Bytes()
	out["evidence.json"] = []byte("{\n  \"apiVersion\": \"credwatch.dev/v1alpha1\",\n  \"kind\": \"ScenarioEvidence\",\n  \"scenario\": \"key-drift\"\n}\n")
	out["watch.jsonl"] = []byte(`{"time":"2026-11-30T09:31:19Z","interval":3,"kind":"held-token-broken","member":"apiserver-4","severity":"error","id":"signing-key-unknown","message":"apiserver-4 rejects the token"}` + "\n")
	return out
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return gz.Bytes()
}

// TestDirectoryInputs: below a directory only log-like files are read by default, --include
// replaces that choice, --exclude wins over it, and credwatch's own outputs are never read nor
// counted as hosts, whatever their name.
func TestDirectoryInputs(t *testing.T) {
	t.Parallel()
	klog := []byte(`E1202 14:03:05.123456       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"` + "\n")
	syslog := []byte(`Dec  2 14:05:01 cp-9 kubelet[812]: E1202 14:05:01.000001    812 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"` + "\n")
	dir := t.TempDir()
	files := map[string][]byte{
		"apiserver-1.log":               klog,
		"kube-apiserver.log.1":          klog,
		"pods/0.log.20261202-140305.gz": gzipped(t, klog),
		"messages":                      syslog,
		"syslog.2.gz":                   gzipped(t, syslog),
		"kubelet-journal.txt":           syslog,
		"sub/cp-2.log":                  klog,
		"old/cp-3.log":                  klog,
		"notes.md":                      []byte("# what we did\nrestarted apiserver-2 at 14:00\n"),
		"kubeconfig.yaml":               []byte("apiVersion: v1\nkind: logs.Config\n"),
		"garbage.bin":                   bytes.Repeat([]byte{0, 0x90, 0xc3, 0xff}, 300),
	}
	own := ownOutputs(t)
	for name, b := range own {
		files[name] = b
	}
	files["archive/report.json.gz"] = gzipped(t, own["report.json"])
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	globs := func(ps ...string) []logs.Glob {
		var gs []logs.Glob
		for _, p := range ps {
			g, err := logs.ParseGlob(p)
			if err != nil {
				t.Fatal(err)
			}
			gs = append(gs, g)
		}
		return gs
	}
	defaultRead := []string{"apiserver-1.log", "kube-apiserver.log.1", "kubelet-journal.txt", "messages", "old/cp-3.log",
		"pods/0.log.20261202-140305.gz", "sub/cp-2.log", "syslog.2.gz"}
	tests := []struct {
		name    string
		sel     logs.FileSelect
		read    []string
		skipped map[string]string // path → part of the reason
	}{
		{"default", logs.FileSelect{}, defaultRead, map[string]string{
			"evidence.json":          "credwatch's own output (a JSON document of kind ScenarioEvidence)",
			"report.json":            "credwatch's own output (a JSON document of kind LogReport)",
			"archive/report.json.gz": "credwatch's own output",
			"report.yaml":            "credwatch's own output (a YAML document",
			"roll.html":              "credwatch's own output (an HTML page)",
			"results.sarif":          "credwatch's own output (a SARIF log)",
			"watch.jsonl":            "credwatch's own output (watch events)",
			"notes.md":               "not a log: no line in a log format",
			"kubeconfig.yaml":        "not a log",
			"garbage.bin":            "binary",
		}},
		{"include replaces the default", logs.FileSelect{Include: globs("*.txt", "sub/*.log")}, []string{"kubelet-journal.txt", "sub/cp-2.log"},
			map[string]string{"apiserver-1.log": "matches no --include pattern", "messages": "matches no --include pattern"}},
		{"include cannot read own outputs", logs.FileSelect{Include: globs("*.json", "*.md")}, []string{"notes.md"},
			map[string]string{"evidence.json": "credwatch's own output", "report.json": "credwatch's own output"}},
		{"exclude wins, and skips a folder", logs.FileSelect{Include: globs("*.log"), Exclude: globs("old", "apiserver-*")}, []string{"sub/cp-2.log"},
			map[string]string{"old": "excluded (old), with all below it", "apiserver-1.log": "excluded (apiserver-*)"}},
		{"exclude a path below the folder", logs.FileSelect{Exclude: globs("pods/*.gz", "*.gz")}, []string{"apiserver-1.log", "kube-apiserver.log.1",
			"kubelet-journal.txt", "messages", "old/cp-3.log", "sub/cp-2.log"}, map[string]string{"syslog.2.gz": "excluded (*.gz)",
			"pods/0.log.20261202-140305.gz": "excluded (pods/*.gz)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := logs.FileInputs(context.Background(), []string{dir}, nil, time.Now(), tt.sel)
			if len(got.Bad) > 0 {
				t.Fatalf("bad inputs: %+v", got.Bad)
			}
			var read []string
			for _, in := range got.Inputs {
				rel, _ := filepath.Rel(dir, in.Name)
				read = append(read, filepath.ToSlash(rel))
			}
			sort.Strings(read)
			if !slices.Equal(read, tt.read) {
				t.Errorf("read %v\nwant %v", read, tt.read)
			}
			why := map[string]string{}
			for _, s := range got.Skipped {
				rel, _ := filepath.Rel(dir, s.Path)
				why[filepath.ToSlash(rel)] = s.Reason
			}
			for p, want := range tt.skipped {
				if !strings.Contains(why[p], want) {
					t.Errorf("%s skipped for %q, want %q", p, why[p], want)
				}
			}
			r, err := logs.Analyze(context.Background(), logs.Config{Year: 2026}, got.Inputs)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range r.Summary.Hosts {
				if h == "evidence" || h == "report" || h == "roll" || h == "notes" {
					t.Errorf("host %q: a file that is not a log was read", h)
				}
			}
		})
	}
}

// TestOwnOutputNamed: credwatch's own output named on its own is not read either; a folder of
// nothing else has no log files, and says why.
func TestOwnOutputNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	own := ownOutputs(t)
	for _, name := range []string{"evidence.json", "report.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), own[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := logs.FileInputs(context.Background(), []string{filepath.Join(dir, "evidence.json"), dir}, nil, time.Now(), logs.FileSelect{})
	if len(got.Inputs) != 0 || len(got.Bad) != 2 {
		t.Fatalf("inputs %+v, bad %+v", got.Inputs, got.Bad)
	}
	if p := got.Bad[0].Problems[0]; !strings.Contains(p, "credwatch's own output (a JSON document of kind ScenarioEvidence), not a log: not read") {
		t.Errorf("named evidence.json: %q", p)
	}
	if p := got.Bad[1].Problems[0]; !strings.HasPrefix(p, "no log files (2 files not read: ") || !strings.Contains(p, "evidence.json: credwatch's own output") {
		t.Errorf("folder: %q", p)
	}
}
