// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"bufio"
	"io"
	"os"
	"regexp"
	"sort"

	"github.com/credwatch/credwatch/pkg/lab/cloudlab/steps"
	"github.com/credwatch/credwatch/pkg/redact"
)

// The evidence types live in package steps (printable without the simulator).
type (
	Evidence  = steps.Evidence
	Step      = steps.Step
	Workload  = steps.Workload
	NodeState = steps.NodeState
	Count     = steps.Count
)

// cloudLine matches the lines about the cloud provider, its logins and node initialisation.
var cloudLine = regexp.MustCompile(`(?i)vcenter|vsphere|login|cloud.?provider|failed to add node|error syncing|instance|uninitialized|providerID|credential`)

// noise are start-up lines that match cloudLine without being about the cloud's state (the
// kubelet's flags and machine, and its volume lines for the cloud controller manager's Pod).
var noise = regexp.MustCompile(`\] FLAG: --|\] Machine: \{|feature gate|\] Version: |MountVolume|VerifyControllerAttachedVolume|Observed pod startup duration`)

// klogHeader is "E1130 12:00:00.000000   123 file.go:45] ".
// A container's log line starts with the CRI's "<time> stderr F ".
var klogHeader = regexp.MustCompile(`^(\S+ std(out|err) [FP] )?[IWEF]\d{4} [\d:.]+\s+\d+ [^\]]+\] `)

// hexID and longNum vary between runs (session keys, UUIDs, pointers, resource versions).
var (
	hexID   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|0x[0-9a-f]+`)
	longNum = regexp.MustCompile(`\d{5,}`)
)

// logMark is a log file and where a step started reading it.
type logMark struct {
	file   string
	offset int64
}

func mark(file string) logMark {
	st, err := os.Stat(file)
	if err != nil {
		return logMark{file: file}
	}
	return logMark{file: file, offset: st.Size()}
}

// cloudLines are the cloud lines written to m.file since m, normalised.
func (m logMark) cloudLines() []string {
	f, err := os.Open(m.file)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(m.offset, io.SeekStart); err != nil {
		return nil
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); cloudLine.MatchString(l) && !noise.MatchString(l) {
			lines = append(lines, normalise(l))
		}
	}
	return lines
}

// normalise strips what varies between runs and redacts (before any cut, so a token is whole
// when redact sees it): evidence is committed in docs/evidence.
func normalise(l string) string {
	l = redact.Text(klogHeader.ReplaceAllString(l, ""))
	l = hexID.ReplaceAllString(l, "<id>")
	l = longNum.ReplaceAllString(l, "<n>")
	if len(l) > 300 {
		l = l[:300] + "…"
	}
	return l
}

func count(lines []string) []Count {
	m := map[string]int{}
	for _, l := range lines {
		m[l]++
	}
	out := make([]Count, 0, len(m))
	for k, v := range m {
		out = append(out, Count{Message: k, Count: v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Message < out[j].Message
	})
	return out
}
