// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/credwatch/credwatch/internal/userfile"
)

// Input is one stream of log lines.
type Input struct {
	Name      string // shown in messages and evidence: the path, "-" for stdin, or pod/container
	Host      string // host of lines that do not name one
	HostGiven bool   // Host was given (SetHosts), not derived from the name
	Component string // component of lines that do not name one
	Size      int64  // bytes, for progress; 0 when unknown
	ModTime   time.Time
	Open      func() (io.ReadCloser, error)
}

// InputStatus is what reading one input gave.
type InputStatus struct {
	Name         string   `json:"name"`
	Host         string   `json:"host,omitempty"`
	Formats      []string `json:"formats,omitempty"`
	Bytes        int64    `json:"bytes"`
	Lines        int64    `json:"lines"`
	MatchedLines int64    `json:"matchedLines"`
	SkippedLines int64    `json:"skippedLines"`
	// UnfilteredLines are matched lines --since kept because their time has no year or zone
	// (klog, syslog) or there is none: filtering them on a guess could drop them all.
	UnfilteredLines int64    `json:"unfilteredLines,omitempty"`
	Read            bool     `json:"read"`
	Problems        []string `json:"problems,omitempty"`

	component string // the input's component (Input.Component)
	hostGiven bool   // Host was given (Input.HostGiven)
	ownHost   bool   // some line named its own host, so Host was only a fallback
}

// FileInputs expands paths into inputs: files (plain or gzip, detected by content), directories
// and "-" for stdin. Below a directory, sel chooses the files (sorted): by default those named
// like logs and those whose first lines are in a log format (FileSelect.choose); the others
// are returned as skipped, with why. No file credwatch wrote (a report, evidence.json, a SARIF
// log, an HTML page) is ever read, named on its own or not. Paths that cannot be read, and
// directories with no log file below, are returned as statuses with the problem, so the others
// are still read. Cancelling ctx abandons an open or read of stdin or a non-regular file (a
// FIFO) that blocks; regular files are opened and read (or mapped) as they are.
func FileInputs(ctx context.Context, paths []string, stdin io.Reader, now time.Time, sel FileSelect) Files {
	var out Files
	for _, p := range paths {
		if p == "-" {
			out.Inputs = append(out.Inputs, Input{Name: "-", Host: "stdin", ModTime: now,
				Open: func() (io.ReadCloser, error) { return io.NopCloser(userfile.Stdin(ctx, stdin)), nil }})
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			out.Bad = append(out.Bad, InputStatus{Name: p, Problems: []string{fmt.Sprintf("cannot read: %v", unwrapPath(err))}})
			continue
		}
		if !st.IsDir() {
			if st.Mode().IsRegular() {
				if head, err := readHead(p); err == nil {
					if own := ownOutput(head); own != "" {
						out.Bad = append(out.Bad, InputStatus{Name: p, Problems: []string{own + ": not read"}})
						continue
					}
				}
			}
			out.Inputs = append(out.Inputs, fileInput(ctx, p, st))
			continue
		}
		out.addDir(ctx, p, sel)
	}
	return out
}

// addDir adds the files below directory dir that sel chooses.
func (out *Files) addDir(ctx context.Context, dir string, sel FileSelect) {
	var found []string
	problems, skipped := len(out.Bad), len(out.Skipped)
	werr := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out.Bad = append(out.Bad, InputStatus{Name: p, Problems: []string{fmt.Sprintf("cannot read: %v", unwrapPath(err))}})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil || rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if why := sel.excluded(rel); why != "" {
				out.Skipped = append(out.Skipped, SkippedFile{Path: p, Reason: why + ", with all below it"})
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if why := sel.choose(p, rel); why != "" {
			out.Skipped = append(out.Skipped, SkippedFile{Path: p, Reason: why})
			return nil
		}
		found = append(found, p)
		return nil
	})
	if werr != nil {
		out.Bad = append(out.Bad, InputStatus{Name: dir, Problems: []string{fmt.Sprintf("cannot list: %v", werr)}})
	}
	if len(found) == 0 && len(out.Bad) == problems {
		why := "no log files"
		if n := len(out.Skipped) - skipped; n > 0 {
			why += fmt.Sprintf(" (%d %s not read: %s)", n, plural(n, "file", "files"), SkippedSummary(out.Skipped[skipped:], 3))
		}
		out.Bad = append(out.Bad, InputStatus{Name: dir, Problems: []string{why}})
	}
	sort.Strings(found)
	for _, f := range found {
		st, err := os.Stat(f)
		if err != nil {
			out.Bad = append(out.Bad, InputStatus{Name: f, Problems: []string{fmt.Sprintf("cannot read: %v", unwrapPath(err))}})
			continue
		}
		out.Inputs = append(out.Inputs, fileInput(ctx, f, st))
	}
}

// SkippedSummary names up to most skipped files with why, for a sentence.
func SkippedSummary(sk []SkippedFile, most int) string {
	parts := make([]string, 0, min(len(sk), most)+1)
	for i, s := range sk {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(sk)-most))
			break
		}
		parts = append(parts, s.Path+": "+s.Reason)
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func fileInput(ctx context.Context, path string, st os.FileInfo) Input {
	host, comp := hostFromPath(path)
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	if !st.Mode().IsRegular() {
		open = func() (io.ReadCloser, error) { return userfile.Open(ctx, path) }
	}
	return Input{Name: path, Host: host, Component: comp, Size: st.Size(), ModTime: st.ModTime(), Open: open}
}
