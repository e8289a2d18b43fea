// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/cloudlab/steps"
	"github.com/credwatch/credwatch/pkg/lab/tally"
	"github.com/credwatch/credwatch/pkg/report"
)

// maxLinesPerMember bounds the auth lines one member's evidence keeps (the counts stay exact).
const maxLinesPerMember = 100

// Evidence is what one scenario run saw.
type Evidence struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Scenario   string    `json:"scenario"`
	Summary    string    `json:"summary"`
	Line       string    `json:"line"` // the kube-apiserver version the lab started with
	Started    time.Time `json:"started"`
	Duration   string    `json:"duration"`
	Phases     []Phase   `json:"phases"`
	Notes      []string  `json:"notes,omitempty"`
	// Restarts lists the lab's controllers that exited during the run and were started again
	// (the kubelet's back-off), with how their last run ended.
	Restarts []Restart `json:"restarts,omitempty"`
	// Cloud is a cloud scenario's evidence, step by step (its Phases are empty).
	Cloud *steps.Evidence `json:"cloud,omitempty"`
	// CAPI is a Cluster API scenario's evidence: the roll's phases as Cluster API went through
	// them (Phases holds one, "roll": what the tenant's pods got from each machine).
	CAPI *CAPIEvidence `json:"capi,omitempty"`
}

// Restart is one controller that the lab restarted during a scenario.
type Restart struct {
	Name     string `json:"name"`
	Restarts int    `json:"restarts"`
	LastExit string `json:"lastExit"`
}

// restarts lists the controllers of s that were restarted.
func restarts(s lab.Status) []Restart {
	var out []Restart
	for _, c := range []struct {
		name string
		st   *lab.ProcStatus
	}{{"kube-controller-manager", s.ControllerManager}, {"kube-scheduler", s.Scheduler}} {
		if c.st != nil && c.st.Restarts > 0 {
			out = append(out, Restart{Name: c.name, Restarts: c.st.Restarts, LastExit: c.st.LastExit})
		}
	}
	return out
}

// Phase is one observation window of a scenario.
type Phase struct {
	Name     string            `json:"name"`
	Window   string            `json:"window"`
	Members  []MemberEvidence  `json:"members"`
	Tenants  tally.Snapshot    `json:"tenants"`
	Probes   []Probe           `json:"probes,omitempty"`
	Measured map[string]string `json:"measured,omitempty"` // named measurements, e.g. first-401-after
	// LogsIn names the phase whose members' auth lines include this one's (a phase of a subset
	// of another's requests); this phase's members then have none of their own.
	LogsIn string `json:"logsIn,omitempty"`
	// Prediction is what credwatch preflight said of the phase's change from the members' flags
	// before it was observed, beside what the phase showed (for phases that change the control
	// plane).
	Prediction *Prediction `json:"prediction,omitempty"`
	// Findings are what credwatch check raised at the end of the phase ("ID [member]: message"),
	// for phases that ask it.
	Findings []string `json:"findings,omitempty"`
}

// MemberEvidence is one member's part of a phase: what the tenants saw from it and what it logged.
type MemberEvidence struct {
	Name         string         `json:"name"`
	Version      string         `json:"version"`
	Role         string         `json:"role"`
	Requests     int            `json:"requests"`
	Unauthorized int            `json:"unauthorized"`
	Statuses     map[int]int    `json:"statuses,omitempty"`
	AuthMessages []MessageCount `json:"authMessages,omitempty"`
	AuthLines    []string       `json:"authLines,omitempty"` // up to 100, oldest first
	// SignerMessages are what the member logged of its external signer's keys (its key cache:
	// "Key id %q not found after refresh", "when syncing supported public keys(Stale set of keys
	// will be supported): ..."), the klog header left out.
	SignerMessages []MessageCount `json:"signerMessages,omitempty"`
	// AuthnConfigMessages are what the member logged of its AuthenticationConfiguration (its
	// reloads: "reloaded authentication config", "failed to validate authentication config" with
	// the reason) and of its JWT authenticators ("oidc authenticator: ..."), the klog header left
	// out.
	AuthnConfigMessages []MessageCount `json:"authnConfigMessages,omitempty"`
}

// MessageCount is one distinct err="..." value of the "Unable to authenticate the request" lines.
type MessageCount struct {
	Message string `json:"message"`
	Count   int    `json:"count"`
	Example string `json:"example"` // one whole log line
}

// Probe is one deliberate token check: minted somewhere, presented to one member.
type Probe struct {
	Name        string `json:"name"`
	MintedBy    string `json:"mintedBy,omitempty"`
	PresentedTo string `json:"presentedTo"`
	Expect      int    `json:"expect,omitempty"` // expected HTTP status; 0 = measured, no expectation
	Status      int    `json:"status"`
	User        string `json:"user,omitempty"`
	Error       string `json:"error,omitempty"`
	Duration    string `json:"duration,omitempty"`
}

// Phase returns the phase with that name.
func (e *Evidence) Phase(name string) (Phase, bool) {
	for _, p := range e.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return Phase{}, false
}

// Member returns a member's evidence in the phase.
func (p Phase) Member(name string) (MemberEvidence, bool) {
	for _, m := range p.Members {
		if m.Name == name {
			return m, true
		}
	}
	return MemberEvidence{}, false
}

// Messages returns every distinct auth message any member logged in the phase.
func (p Phase) Messages() []string {
	var out []string
	for _, m := range p.Members {
		for _, mc := range m.AuthMessages {
			out = append(out, mc.Message)
		}
	}
	return out
}

// AuthError extracts the err="..." value of an "Unable to authenticate the request" line, unquoted.
// It returns "" when the line has none.
func AuthError(line string) string {
	i := strings.Index(line, `err="`)
	if i < 0 {
		return ""
	}
	rest := line[i+len("err="):]
	// Find the closing quote, skipping escaped characters.
	end := -1
	for j := 1; j < len(rest); j++ {
		if rest[j] == '\\' {
			j++
			continue
		}
		if rest[j] == '"' {
			end = j
			break
		}
	}
	if end < 0 {
		return strings.Trim(rest, `"`)
	}
	q := rest[:end+1]
	if u, err := strconv.Unquote(q); err == nil {
		return u
	}
	return q[1 : len(q)-1]
}

// streamID is the HTTP/2 stream number in an error (each request's own), which would make every
// line of one failure a message of its own.
var streamID = regexp.MustCompile(`stream ID \d+`)

// countMessages groups lines by their err value (stream IDs blanked), most frequent first.
func countMessages(lines []string) []MessageCount {
	return countBy(lines, func(l string) string {
		msg := AuthError(l)
		if msg == "" {
			msg = strings.TrimSpace(l)
		}
		return streamID.ReplaceAllString(msg, "stream ID N")
	})
}

// klogHeader is the header of a klog line ("E1207 03:07:59.708973   31486 keycache.go:79] ").
var klogHeader = regexp.MustCompile(`^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ \S+:\d+\] `)

// countLines groups klog lines by their text after the header, most frequent first.
func countLines(lines []string) []MessageCount {
	return countBy(lines, func(l string) string { return klogHeader.ReplaceAllString(strings.TrimSpace(l), "") })
}

// countBy groups lines by message(line), most frequent first; each keeps its first line as example.
func countBy(lines []string, message func(string) string) []MessageCount {
	idx := map[string]int{}
	var out []MessageCount
	for _, l := range lines {
		msg := message(l)
		i, ok := idx[msg]
		if !ok {
			idx[msg] = len(out)
			out = append(out, MessageCount{Message: msg, Example: l})
			i = len(out) - 1
		}
		out[i].Count++
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// WriteTable prints the evidence for people.
func (e *Evidence) WriteTable(w io.Writer, _ report.TableOptions) error {
	fmt.Fprintf(w, "Scenario %s on %s: %s\n", e.Scenario, e.Line, e.Summary)
	fmt.Fprintf(w, "Took %s.\n", e.Duration)
	if e.Cloud != nil {
		if err := e.Cloud.WriteTable(w); err != nil {
			return err
		}
	}
	if e.CAPI != nil {
		e.CAPI.writeTable(w)
	}
	for _, p := range e.Phases {
		if err := p.writeTable(w); err != nil {
			return err
		}
	}
	for _, r := range e.Restarts {
		fmt.Fprintf(w, "\nRestarted: %s, %d time(s) (last exit: %s)\n", r.Name, r.Restarts, r.LastExit)
	}
	if len(e.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes:")
		for _, n := range e.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	return nil
}

func (p Phase) writeTable(w io.Writer) error {
	t := p.Tenants
	fmt.Fprintf(w, "\n== %s (%s)\n", p.Name, p.Window)
	fmt.Fprintf(w, "Tenant requests through the load balancer: %d, 401: %d (%.1f%%), no response: %d; tokens minted: %d, failed TokenRequests: %d\n",
		t.Requests, t.Unauthorized, 100*t.UnauthorizedRate(), t.NoResponse, t.TokensIssued, t.TokenErrors)
	tw := report.NewTabWriter(w)
	report.Row(tw, "MEMBER", "VERSION", "ROLE", "SERVED", "401", "401 RATE", "STATUSES", "AUTH LINES")
	for _, m := range p.Members {
		rate := "-"
		if m.Requests > 0 {
			rate = fmt.Sprintf("%.0f%%", 100*float64(m.Unauthorized)/float64(m.Requests))
		}
		n := 0
		for _, mc := range m.AuthMessages {
			n += mc.Count
		}
		report.Row(tw, m.Name, m.Version, m.Role, strconv.Itoa(m.Requests), strconv.Itoa(m.Unauthorized), rate, statuses(m.Statuses), strconv.Itoa(n))
	}
	if n := t.Member(tally.NoResponse).Requests; n > 0 {
		report.Row(tw, tally.NoResponse, "", "", strconv.Itoa(n), "0", "-", "", "")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var pairs []tally.Pair
	for _, pr := range t.Pairs {
		if pr.Unauthorized > 0 {
			pairs = append(pairs, pr)
		}
	}
	if len(pairs) > 0 {
		fmt.Fprintln(w, "Rejected requests by token minter -> serving member:")
		for _, pr := range pairs {
			fmt.Fprintf(w, "  %s -> %s: %d of %d\n", orUnknown(pr.MintedBy), pr.ServedBy, pr.Unauthorized, pr.Requests)
		}
	}
	logged := false
	for _, m := range p.Members {
		for _, mc := range m.AuthMessages {
			if !logged {
				fmt.Fprintln(w, `What the members logged ("Unable to authenticate the request"):`)
				logged = true
			}
			fmt.Fprintf(w, "  %s  %d x err=%q\n", m.Name, mc.Count, mc.Message)
			fmt.Fprintf(w, "      %s\n", mc.Example)
		}
	}
	switch {
	case p.LogsIn != "":
		fmt.Fprintf(w, "What the members logged is under %s.\n", p.LogsIn)
	case !logged:
		fmt.Fprintln(w, `No member logged "Unable to authenticate the request".`)
	}
	writeMessages(w, p.Members, "What the members logged of their external signers' keys:", func(m MemberEvidence) []MessageCount { return m.SignerMessages })
	writeMessages(w, p.Members, "What the members logged of their authentication configurations:", func(m MemberEvidence) []MessageCount { return m.AuthnConfigMessages })
	if len(p.Probes) > 0 {
		fmt.Fprintln(w, "Probes:")
		for _, pr := range p.Probes {
			got := strconv.Itoa(pr.Status)
			if pr.Status == 0 {
				got = "no response: " + pr.Error
			}
			verdict := ""
			if pr.Expect != 0 {
				verdict = "  (as expected)"
				if pr.Expect != pr.Status {
					verdict = fmt.Sprintf("  (UNEXPECTED, wanted %d)", pr.Expect)
				}
			}
			fmt.Fprintf(w, "  %s: %s after %s%s\n", pr.Name, got, pr.Duration, verdict)
		}
	}
	if p.Prediction != nil {
		fmt.Fprintln(w, "Preflight: "+p.Prediction.note())
	}
	if len(p.Findings) > 0 {
		fmt.Fprintln(w, "credwatch check:")
		for _, f := range p.Findings {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
	if len(p.Measured) > 0 {
		keys := make([]string, 0, len(p.Measured))
		for k := range p.Measured {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintln(w, "Measured:")
		for _, k := range keys {
			fmt.Fprintf(w, "  %s: %s\n", k, p.Measured[k])
		}
	}
	return nil
}

func statuses(m map[int]int) string {
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		name := strconv.Itoa(c)
		if c == 0 {
			name = "none"
		}
		parts = append(parts, fmt.Sprintf("%s:%d", name, m[c]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// writeMessages prints each member's messages of one kind under title (nothing when none has any).
func writeMessages(w io.Writer, members []MemberEvidence, title string, of func(MemberEvidence) []MessageCount) {
	first := true
	for _, m := range members {
		for _, mc := range of(m) {
			if first {
				fmt.Fprintln(w, title)
				first = false
			}
			fmt.Fprintf(w, "  %s  %d x %s\n", m.Name, mc.Count, mc.Message)
		}
	}
}
