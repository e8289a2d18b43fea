// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"github.com/credwatch/credwatch/pkg/logs/cause"
	"sort"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/internal/agg"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
)

// Kind is the kind of the document `credwatch logs -o json|yaml` writes.
const Kind = "LogReport"

// Report is the result of an analysis: the JSON/YAML contract of `credwatch logs`
// (docs/logs.md).
type Report struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Summary    Summary       `json:"summary"`
	Inputs     []InputStatus `json:"inputs"`
	Skipped    []SkippedFile `json:"skippedFiles,omitempty"` // files below directory inputs not read (FileInputs)
	Verdict    []Hypothesis  `json:"verdict"`
	Failures   []Group       `json:"failures"`
	Context    []Group       `json:"contextEvents"`
	Unknown    []UnknownText `json:"unknown,omitempty"`
	Events     []Event       `json:"events"`

	// ToolVersion is credwatch's version, for SARIF's tool.driver.version (set by the command).
	ToolVersion string `json:"-"`
	// FailOn is --fail-on, for JUnit's failed cases (set by the command; "" is error).
	FailOn catalogue.Severity `json:"-"`

	hostComponents map[string]map[string]bool
	catalogue      *catalogue.Catalogue // the causes' titles, meanings and remedies, for SARIF
}

// JSONMembers lists the report's members for report.Print, which encodes them concurrently
// (the failures' series per minute are most of an incident's report); TestJSONMembers checks
// that the document is the struct's encoding.
func (r *Report) JSONMembers() []report.Member {
	ms := []report.Member{{Name: "apiVersion", Value: &r.APIVersion}, {Name: "kind", Value: &r.Kind},
		{Name: "summary", Value: &r.Summary}, {Name: "inputs", Value: &r.Inputs}}
	if len(r.Skipped) > 0 {
		ms = append(ms, report.Member{Name: "skippedFiles", Value: &r.Skipped})
	}
	ms = append(ms, report.Member{Name: "verdict", Value: &r.Verdict},
		report.Member{Name: "failures", Value: &r.Failures, Split: true}, report.Member{Name: "contextEvents", Value: &r.Context, Split: true})
	if len(r.Unknown) > 0 {
		ms = append(ms, report.Member{Name: "unknown", Value: &r.Unknown})
	}
	return append(ms, report.Member{Name: "events", Value: &r.Events, Split: true})
}

// Summary counts what was read.
type Summary struct {
	Inputs       int   `json:"inputs"`
	InputsRead   int   `json:"inputsRead"`
	Bytes        int64 `json:"bytes"`
	Lines        int64 `json:"lines"`
	SkippedLines int64 `json:"skippedLines"`
	// UnfilteredLines are matched lines --since kept because their time has no year or zone
	// (klog, syslog) or there is none (InputStatus.UnfilteredLines).
	UnfilteredLines int64     `json:"unfilteredLines,omitempty"`
	AuthFailures    int       `json:"authFailures"`
	ContextEvents   int       `json:"contextEvents"`
	UnknownLines    int       `json:"unknownLines"`
	From            time.Time `json:"from,omitzero"`
	To              time.Time `json:"to,omitzero"`
	Hosts           []string  `json:"hosts"`
}

// Group is the aggregate of one host, component and cause (or context event).
type Group struct {
	Host      string             `json:"host"`
	Component string             `json:"component"`
	Cause     string             `json:"cause"`
	Client    string             `json:"client,omitempty"`      // the client told Unauthorized (user agent product or address)
	Explained string             `json:"explainedBy,omitempty"` // the cause the member names near a client's 401s
	Severity  catalogue.Severity `json:"severity"`
	Title     string             `json:"title"`
	Count     int                `json:"count"`
	First     time.Time          `json:"first,omitzero"`
	Last      time.Time          `json:"last,omitzero"`
	Bursts    []Burst            `json:"bursts,omitempty"`
	PerMinute []MinuteCount      `json:"perMinute,omitempty"`
	Related   map[string]int     `json:"relatedCauses,omitempty"`

	evidence []Event
}

// Burst is a run of consecutive minutes with at least Config.BurstPerMinute lines each.
type Burst struct {
	From          time.Time `json:"from"`
	To            time.Time `json:"to"`
	Count         int       `json:"count"`
	PeakPerMinute int       `json:"peakPerMinute"`
}

// MinuteCount is the number of lines in one minute.
type MinuteCount struct {
	Minute Minute `json:"minute"`
	Count  int    `json:"count"`
}

// Minute is the start of a minute. It is written as time.Time is (RFC 3339), but as text: a
// dense report has tens of thousands of them, and encoding/json validates every MarshalJSON's
// output again, which took a third of -o json's time.
type Minute time.Time

// Time is m as a time.Time.
func (m Minute) Time() time.Time { return time.Time(m) }

// MarshalText writes m in RFC 3339.
func (m Minute) MarshalText() ([]byte, error) {
	return time.Time(m).AppendFormat(make([]byte, 0, len(time.RFC3339)), time.RFC3339Nano), nil
}

// UnmarshalText reads m in RFC 3339.
func (m *Minute) UnmarshalText(b []byte) error {
	t, err := time.Parse(time.RFC3339Nano, string(b))
	*m = Minute(t)
	return err
}

// UnknownText is an authentication error no catalogue spelling matched, kept verbatim.
type UnknownText struct {
	Host      string `json:"host"`
	Component string `json:"component"`
	Count     int    `json:"count"`
	Text      string `json:"text"`
	// Family is the kind of credential failure the text is nearest (cause.Families), and Words
	// the family's words it holds: what put it on the credential path.
	Family string   `json:"family,omitempty"`
	Words  []string `json:"words,omitempty"`
}

func buildReport(cfg Config, a *aggregator, inputs []InputStatus) *Report {
	r := &Report{APIVersion: report.APIVersion, Kind: Kind, Inputs: inputs, hostComponents: a.Hosts(), catalogue: cfg.Catalogue}
	r.Summary.Inputs = len(inputs)
	for _, in := range inputs {
		if in.Read {
			r.Summary.InputsRead++
		}
		r.Summary.Bytes += in.Bytes
		r.Summary.Lines += in.Lines
		r.Summary.SkippedLines += in.SkippedLines
		r.Summary.UnfilteredLines += in.UnfilteredLines
	}
	for h := range a.Hosts() {
		if h != "unknown" && h != "stdin" {
			r.Summary.Hosts = append(r.Summary.Hosts, h)
		}
	}
	sort.Strings(r.Summary.Hosts)
	for _, g := range a.Groups() {
		e, _ := cfg.Catalogue.Get(g.Key.Cause)
		out := Group{Host: g.Key.Host, Component: g.Key.Component, Cause: g.Key.Cause, Client: g.Key.Client, Severity: e.Severity,
			Title: e.Title, Count: g.Count, First: g.First, Last: g.Last, Related: g.Related, evidence: a.Evidence(g)}
		out.PerMinute, out.Bursts = minutes(g.Series(), cfg.BurstPerMinute)
		if !g.First.IsZero() && (r.Summary.From.IsZero() || g.First.Before(r.Summary.From)) {
			r.Summary.From = g.First
		}
		if g.Last.After(r.Summary.To) {
			r.Summary.To = g.Last
		}
		if g.Kind == "event" {
			r.Context = append(r.Context, out)
			r.Summary.ContextEvents += g.Count
		} else {
			r.Failures = append(r.Failures, out)
			r.Summary.AuthFailures += g.Count
		}
		if g.Key.Cause == CauseUnknown {
			r.Summary.UnknownLines += g.Count
			for t, c := range g.Texts {
				fam, words, _ := cause.Nearest(t)
				r.Unknown = append(r.Unknown, UnknownText{Host: g.Key.Host, Component: g.Key.Component, Count: c, Text: redact.Text(t),
					Family: fam, Words: words})
			}
		}
		r.Events = append(r.Events, out.evidence...)
	}
	explainClientGroups(r.Failures)
	sortGroups(r.Failures)
	sortGroups(r.Context)
	sort.Slice(r.Unknown, func(i, j int) bool {
		a, b := r.Unknown[i], r.Unknown[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Host+a.Text < b.Host+b.Text
	})
	sort.SliceStable(r.Events, func(i, j int) bool { return earlier(&r.Events[i], &r.Events[j]) })
	if r.Events == nil {
		r.Events = []Event{}
	}
	r.Verdict = verdict(cfg.Catalogue, r)
	return r
}

func sortGroups(gs []Group) {
	sort.Slice(gs, func(i, j int) bool {
		a, b := gs[i], gs[j]
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() > b.Severity.Rank()
		}
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Host+"/"+a.Component+"/"+a.Cause+"/"+a.Client < b.Host+"/"+b.Component+"/"+b.Cause+"/"+b.Client
	})
}

// minutes turns the per-minute counts, in order of minute, into the report's series and finds
// the bursts.
func minutes(counts []agg.MinuteCount, perMinute int) ([]MinuteCount, []Burst) {
	series := make([]MinuteCount, len(counts))
	var bursts []Burst
	var cur *Burst
	prev := int64(-1 << 62)
	for i, mc := range counts {
		k, n := mc.Minute, mc.Count
		t := time.Unix(k*60, 0).UTC()
		series[i] = MinuteCount{Minute: Minute(t), Count: n}
		if n < perMinute {
			cur = nil
			prev = k
			continue
		}
		if cur == nil || k != prev+1 {
			bursts = append(bursts, Burst{From: t})
			cur = &bursts[len(bursts)-1]
		}
		cur.To = t.Add(time.Minute)
		cur.Count += n
		cur.PeakPerMinute = max(cur.PeakPerMinute, n)
		prev = k
	}
	return series, bursts
}

// Catalogue is the catalogue the report's causes come from (their titles, meanings and remedies),
// or nil for a report not made by Analyze.
func (r *Report) Catalogue() *catalogue.Catalogue { return r.catalogue }

// Evidence returns the kept lines of a group, earliest first.
func (g Group) Evidence() []Event { return g.evidence }

// hostList formats hosts for a sentence.
func hostList(hs []string) string {
	if len(hs) > 6 {
		return strings.Join(hs[:6], ", ") + ", …"
	}
	return strings.Join(hs, ", ")
}
