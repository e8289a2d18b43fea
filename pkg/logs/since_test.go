// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sinceKlog is a bare klog line of December 2nd (no year, no zone), at clock.
func sinceKlog(clock string) string {
	return "E1202 " + clock + `.123456       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"`
}

// TestSinceWithoutFullTime: --since never drops a line on a guessed time. Lines without a year
// or zone (klog, syslog) or with no time at all are kept and counted as unfiltered, whatever the
// file's modification time makes of them; lines with a full time are filtered as before.
func TestSinceWithoutFullTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	since := now.Add(-2 * time.Hour)
	var yearless, mixed []string
	for i := range 20 { // repeated lines, as a log repeats them
		yearless = append(yearless, sinceKlog("14:03:"+twoDigits(i)))
	}
	yearless = append(yearless, `Dec  2 14:05:01 cp-1 kubelet[812]: E1202 14:05:01.000001    812 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"`)
	mixed = append(mixed,
		// Full times: one before the window (dropped), one inside it (kept, filtered).
		`2026-12-02T10:00:00.000000Z stderr F `+sinceKlog("10:00:00"),
		`2026-12-02T14:30:00.000000Z stderr F `+sinceKlog("14:30:00"),
		`{"log":"`+strings.ReplaceAll(sinceKlog("09:00:00"), `"`, `\"`)+`\n","stream":"stderr","time":"2026-12-02T09:00:00Z"}`,
		// No year or zone, and a client line with no time at all: kept, unfiltered.
		sinceKlog("09:10:00"),
		`Dec  2 09:11:00 cp-2 kube-apiserver[1]: E1202 09:11:00.000001       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"`,
		`error: You must be logged in to the server (Unauthorized)`,
	)
	dir := t.TempDir()
	write := func(name string, lines []string, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A copy whose date says November: completed from it, the lines would be a year old.
	oldCopy := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name             string
		path             string
		since            time.Time
		failures, unfilt int
	}{
		{"yearless, old file date", write("yearless.log", yearless, oldCopy), since, 21, 21},
		{"yearless, current file date", write("yearless-now.log", yearless, now), since, 21, 21},
		{"yearless, no --since", write("yearless-all.log", yearless, oldCopy), time.Time{}, 21, 0},
		{"mixed", write("mixed.log", mixed, now), since, 4, 3},
		{"mixed, no --since", write("mixed-all.log", mixed, now), time.Time{}, 6, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := FileInputs(context.Background(), []string{tt.path}, nil, now, FileSelect{})
			if len(files.Bad) > 0 {
				t.Fatalf("inputs: %+v", files.Bad)
			}
			r, err := Analyze(context.Background(), Config{Since: tt.since, Now: now, Workers: 1}, files.Inputs)
			if err != nil {
				t.Fatal(err)
			}
			if r.Summary.AuthFailures != tt.failures || r.Summary.UnfilteredLines != int64(tt.unfilt) {
				t.Errorf("%d failures, %d unfiltered; want %d and %d", r.Summary.AuthFailures, r.Summary.UnfilteredLines, tt.failures, tt.unfilt)
			}
			if got := r.Inputs[0].UnfilteredLines; got != int64(tt.unfilt) {
				t.Errorf("input's unfiltered lines %d, want %d", got, tt.unfilt)
			}
		})
	}
}

// TestPartialTime: the records that say their time is a guess.
func TestPartialTime(t *testing.T) {
	t.Parallel()
	ref := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	tests := []struct {
		line    string
		partial bool
	}{
		{sinceKlog("14:03:05"), true},
		{`Dec  2 14:03:05 cp-1 kubelet[1]: hello`, true},
		{`Dec  2 14:03:05 cp-1 kubelet[1]: {"ts":1795939200.484123,"msg":"hello"}`, false},
		{`2026-12-02T14:03:05+0000 cp-1 kubelet[1]: hello`, false},
		{`2026-12-02T14:03:05.1Z stderr F ` + sinceKlog("14:03:05"), false},
		{`kube-apiserver-cp-1 kube-apiserver ` + sinceKlog("14:03:05"), true},
		{`plain text`, false},
	}
	for _, tt := range tests {
		r := ParseLine(tt.line, "h", "", ref)
		if r.PartialTime != tt.partial {
			t.Errorf("%q: PartialTime %v, want %v (time %v, format %s)", tt.line, r.PartialTime, tt.partial, r.Time, r.Format)
		}
	}
}

func twoDigits(i int) string { return string([]byte{byte('0' + i/10), byte('0' + i%10)}) }
