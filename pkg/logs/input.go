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
}

// FileInputs expands paths into inputs: files (plain or gzip, detected by content), directories
// (every regular file below, sorted), and "-" for stdin. Paths that cannot be read, and
// directories with no file below, are returned as statuses with the problem, so the others are
// still read. Cancelling ctx abandons an open or read of stdin or a non-regular file (a FIFO)
// that blocks; regular files are opened and read (or mapped) as they are.
func FileInputs(ctx context.Context, paths []string, stdin io.Reader, now time.Time) ([]Input, []InputStatus) {
	var ins []Input
	var bad []InputStatus
	for _, p := range paths {
		if p == "-" {
			ins = append(ins, Input{Name: "-", Host: "stdin", ModTime: now,
				Open: func() (io.ReadCloser, error) { return io.NopCloser(userfile.Stdin(ctx, stdin)), nil }})
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			bad = append(bad, InputStatus{Name: p, Problems: []string{fmt.Sprintf("cannot read: %v", unwrapPath(err))}})
			continue
		}
		if !st.IsDir() {
			ins = append(ins, fileInput(ctx, p, st))
			continue
		}
		var found []string
		problems := len(bad)
		werr := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				bad = append(bad, InputStatus{Name: path, Problems: []string{fmt.Sprintf("cannot read: %v", unwrapPath(err))}})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				found = append(found, path)
			}
			return nil
		})
		if werr != nil {
			bad = append(bad, InputStatus{Name: p, Problems: []string{fmt.Sprintf("cannot list: %v", werr)}})
		}
		if len(found) == 0 && len(bad) == problems {
			bad = append(bad, InputStatus{Name: p, Problems: []string{"no log files"}})
		}
		sort.Strings(found)
		for _, f := range found {
			st, err := os.Stat(f)
			if err != nil {
				bad = append(bad, InputStatus{Name: f, Problems: []string{fmt.Sprintf("cannot read: %v", unwrapPath(err))}})
				continue
			}
			ins = append(ins, fileInput(ctx, f, st))
		}
	}
	return ins, bad
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

// hostFromPath guesses the host and component of a log file from its path:
// /var/log/pods/<ns>_<pod>_<uid>/<container>/0.log, /var/log/containers/<pod>_<ns>_<container>-<id>.log,
// and otherwise the file's base name without extensions (lab captures are <member>.log).
func hostFromPath(path string) (host, component string) {
	clean := filepath.ToSlash(path)
	parts := strings.Split(clean, "/")
	for i, p := range parts {
		if p == "pods" && i+2 < len(parts) {
			f := strings.Split(parts[i+1], "_")
			if len(f) == 3 {
				c := parts[i+2]
				return hostFromPod(f[1], c), normalizeComponent(c)
			}
		}
		if p == "containers" && i+1 < len(parts) {
			f := strings.Split(strings.TrimSuffix(parts[i+1], ".log"), "_")
			if len(f) == 3 {
				c := f[2]
				if j := strings.LastIndexByte(c, '-'); j > 0 && len(c)-j > 32 {
					c = c[:j]
				}
				return hostFromPod(f[0], c), normalizeComponent(c)
			}
		}
	}
	base := filepath.Base(path)
	for _, ext := range []string{".gz", ".log", ".txt", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base, ""
}
