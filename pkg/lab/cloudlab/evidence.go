package cloudlab

import (
	"bufio"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/credwatch/credwatch/pkg/redact"
)

// Evidence is what the real components did in each step of cloud-password-rotated.
type Evidence struct {
	Scenario string `json:"scenario"`
	Era      string `json:"era"`
	Steps    []Step `json:"steps"`
}

// Step is one step: what was done and what was seen while it ran.
type Step struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	// GetDelete is "ok" when a get and a delete through the API worked, else the error.
	GetDelete string `json:"getDelete,omitempty"`
	// Sessions is what ending the account's sessions ended.
	Sessions    string      `json:"sessions,omitempty"`
	Deployments []Workload  `json:"deployments,omitempty"`
	Nodes       []NodeState `json:"nodes"`
	// Events are the Events recorded during the step (all namespaces): "Reason: message" counted.
	Events []Count `json:"events"`
	// Logins are the service account's login attempts at vCenter or Keystone during the step.
	LoginsAccepted int `json:"loginsAccepted"`
	LoginsRejected int `json:"loginsRejected"`
	// Messages are the cloud lines each component logged during the step, counted.
	Messages map[string][]Count `json:"messages,omitempty"`
	// Restarted is what a restart in this step did: component -> "running" | "exited: <err>".
	Restarted map[string]string `json:"restarted,omitempty"`
}

// Workload is a Deployment's Pods by phase ("none" when it has none).
type Workload struct {
	Name string         `json:"name"`
	Pods map[string]int `json:"pods"`
}

// NodeState is a Node as the API shows it.
type NodeState struct {
	Name          string `json:"name"`
	Ready         bool   `json:"ready"`
	ProviderID    string `json:"providerID,omitempty"`
	Uninitialized bool   `json:"uninitialized"`
}

// Count is a message and how often it was seen.
type Count struct {
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// Step returns the step named name.
func (e *Evidence) Step(name string) (Step, bool) {
	for _, s := range e.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return Step{}, false
}

// Has reports whether component logged a message containing sub in the step.
func (s Step) Has(component, sub string) bool {
	for _, c := range s.Messages[component] {
		if strings.Contains(c.Message, sub) {
			return true
		}
	}
	return false
}

// Node returns the node named name.
func (s Step) Node(name string) (NodeState, bool) {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return NodeState{}, false
}

// Workload returns the Deployment named name.
func (s Step) Workload(name string) (Workload, bool) {
	for _, w := range s.Deployments {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

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
