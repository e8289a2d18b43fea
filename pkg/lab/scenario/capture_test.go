// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build capture

package scenario_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/scenario"
)

// maxCapture bounds one captured log file.
const maxCapture = 190 << 10

// TestCaptureLogs is not a test but the generator of the logs package's test data: it runs every
// scenario on both lines and stores, per scenario and member, the part of the member's
// kube-apiserver log written during the scenario (trimmed to warnings, errors and authentication
// lines), plus the evidence as JSON, under $CREDWATCH_CAPTURE_DIR. It is built only with
// -tags capture, so no test run meets it; hack/capture-logs.sh runs it.
func TestCaptureLogs(t *testing.T) {
	out := os.Getenv("CREDWATCH_CAPTURE_DIR")
	if out == "" {
		t.Fatal("CREDWATCH_CAPTURE_DIR is not set: run hack/capture-logs.sh")
	}
	chains := []struct {
		o     lab.Options
		steps []string
	}{
		{lab.Options{Members: 2, Version: lab.DefaultVersion}, newLineCaptures},
		{lab.Options{Members: 3, Version: lab.OldVersion}, oldLineCaptures},
	}
	for _, c := range chains {
		t.Run(c.o.Version, func(t *testing.T) {
			steps := onlySteps(t, c.steps)
			l := labtest.Start(t, c.o)
			env := &scenario.Env{Lab: l, Window: window, Log: testLog{t}}
			for _, name := range steps {
				s, _ := scenario.Get(name)
				offsets := logSizes(l)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				ev, err := s.Run(ctx, env)
				cancel()
				if err != nil {
					t.Errorf("scenario %s: %v", name, err)
				}
				if ev == nil {
					continue
				}
				dir := filepath.Join(out, c.o.Version, name)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, m := range evidenceMembers(ev) {
					data, err := l.MemberLog(m)
					if err != nil {
						t.Errorf("log of %s: %v", m, err)
						continue
					}
					if off := offsets[m]; off <= int64(len(data)) {
						data = data[off:]
					}
					if err := os.WriteFile(filepath.Join(dir, m+".log"), trimLog(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				js, err := json.MarshalIndent(ev, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "evidence.json"), append(js, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("captured %s on %s into %s", name, c.o.Version, dir)
			}
		})
	}
}

// logSizes returns the current size of every apiserver log the lab ever started.
func logSizes(l *lab.Lab) map[string]int64 {
	out := map[string]int64{}
	for _, n := range l.LogNames() {
		if !strings.HasPrefix(n, "apiserver-") {
			continue
		}
		if data, err := l.MemberLog(n); err == nil {
			out[n] = int64(len(data))
		}
	}
	return out
}

func evidenceMembers(ev *scenario.Evidence) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ev.Phases {
		for _, m := range p.Members {
			if !seen[m.Name] {
				seen[m.Name] = true
				out = append(out, m.Name)
			}
		}
	}
	return out
}

// trimLog keeps the lines a log reader cares about: warnings and errors, and any line about
// authentication, tokens, service accounts or etcd; at most maxCapture bytes, keeping every
// "Unable to authenticate the request" line that fits and the other lines in order until their
// share runs out.
func trimLog(data []byte) []byte {
	type line struct {
		text string
		auth bool
	}
	var lines []line
	authBytes := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "Unable to authenticate the request") {
			lines = append(lines, line{l, true})
			authBytes += len(l) + 1
			continue
		}
		keep := l != "" && (l[0] == 'E' || l[0] == 'W' || l[0] == 'F')
		lower := strings.ToLower(l)
		for _, w := range []string{"authenticat", "token", "serviceaccount", "service-account", "etcd"} {
			keep = keep || strings.Contains(lower, w)
		}
		if keep {
			lines = append(lines, line{l, false})
		}
	}
	otherBudget := max(maxCapture-authBytes, maxCapture/4)
	var b bytes.Buffer
	for _, l := range lines {
		if !l.auth {
			if otherBudget < len(l.text)+1 {
				continue
			}
			otherBudget -= len(l.text) + 1
		}
		if b.Len()+len(l.text)+1 > maxCapture {
			break
		}
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
