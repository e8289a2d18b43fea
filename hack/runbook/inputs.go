// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/watch"
	"github.com/credwatch/credwatch/pkg/watch/watchtest"
)

// watch replays the snapshots a real `credwatch watch` fetched on the lab (capture) through the
// current pkg/watch, one line per event as `credwatch watch` prints them when stdout is not a
// terminal. The clock is the snapshots' own, so the times are the lab's.
func (r *renderer) watch(name, cmdline string) (string, error) {
	var snaps []*check.Snapshot
	if err := readJSON(filepath.Join(labDir, name), &snaps); err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := watchtest.Replay(r.ctx, snaps, watchInterval, watch.NewLines(&out)); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return block(cmdline, out.String(), nil), nil
}

// fieldLine is one entry of the field corpus (pkg/logs/testdata/field/*.yaml).
type fieldLine struct {
	Line      string `json:"line"`
	URL       string `json:"url"`
	Cause     string `json:"cause"`
	Component string `json:"component"`
	From      string `json:"from"`
	Note      string `json:"note"`
}

const fieldDir = "pkg/logs/testdata/field"

// field writes the first field-corpus line containing each of subs into a file named file, and
// returns `cat file` and `credwatch logs file` as blocks.
func (r *renderer) field(file string, subs ...string) (string, error) {
	paths, err := filepath.Glob(filepath.Join(fieldDir, "*.yaml"))
	repeats, _ := filepath.Glob(filepath.Join(fieldDir+"-repeats", "*.yaml")) // further lines of the same threads
	paths = append(paths, repeats...)
	if err != nil || len(paths) == 0 {
		return "", fmt.Errorf("field corpus %s: none found", fieldDir)
	}
	var corpus []fieldLine
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		var doc struct {
			Lines []fieldLine `json:"lines"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return "", fmt.Errorf("%s: %w", p, err)
		}
		corpus = append(corpus, doc.Lines...)
	}
	var lines []string
	for _, s := range subs {
		found := false
		for _, l := range corpus {
			if strings.Contains(l.Line, s) {
				lines, found = append(lines, l.Line), true
				break
			}
		}
		if !found {
			return "", fmt.Errorf("field corpus: no line contains %q", s)
		}
	}
	dir, err := r.tempDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	logs, err := r.runIn(dir, "logs", "--year", "2026", file)
	if err != nil {
		return "", err
	}
	return block("cat "+file, strings.Join(lines, "\n"), nil) + "\n\n" + logs, nil
}
