// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

// WriteTable prints the credentials, then the findings, then notes.
func (r *Report) WriteTable(w io.Writer, o report.TableOptions) error {
	if len(r.Items) == 0 {
		fmt.Fprintln(w, "No cloud credentials found.")
	} else if err := CredentialGrid("", r.Items).Write(w, o); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nLogins: %s (%d attempt(s)).\n", r.Login, r.LoginAttempts)
	if len(r.Findings) > 0 {
		fmt.Fprintln(w, "\nFindings:")
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  %-8s %s\n", strings.ToUpper(string(f.Severity)), f.ID)
			if err := o.Wrap(w, "           ", f.Message); err != nil {
				return err
			}
			if err := o.Wrap(w, "           ", "remedy: "+f.Remedy); err != nil {
				return err
			}
		}
	} else {
		fmt.Fprintln(w, "\nNo findings.")
	}
	var notes []string
	for _, it := range r.Items {
		if it.Test.Verdict == NotTested && it.Test.Detail != "" && it.Test.Detail != "--no-login" {
			notes = append(notes, "note: "+it.Account()+": not tested: "+it.Test.Detail)
		}
	}
	for _, n := range r.Notes {
		notes = append(notes, "note: "+n)
	}
	for _, e := range r.InputErrors {
		notes = append(notes, "bad input: "+e)
	}
	for _, e := range r.Errors {
		notes = append(notes, "partial: "+e)
	}
	for _, n := range notes {
		if err := o.Hang(w, "", "    ", n); err != nil {
			return err
		}
	}
	return nil
}

// CredentialGrid is the table of credentials check and cloud print: one row per credential,
// the verdict and what to do; long accounts, sources, consumers and actions are cut to fit
// (-o wide shows them whole).
func CredentialGrid(indent string, items []Item) *report.Grid {
	g := report.NewGrid(indent, report.Col{Name: "PROVIDER"}, report.Col{Name: "ACCOUNT", Flex: true},
		report.Col{Name: "SOURCE", Flex: true}, report.Col{Name: "VERDICT"}, report.Col{Name: "CONSUMERS", Flex: true},
		report.Col{Name: "ACTION", Flex: true})
	for _, it := range items {
		verdict := string(it.Test.Verdict)
		if it.Test.Fault != "" {
			verdict += " (" + it.Test.Fault + ")"
		}
		if it.Insecure {
			verdict += " [tls not verified]"
		}
		g.Row(string(it.Provider), it.Account(), it.Source.String(), verdict, ConsumerList(it.Consumers), it.Action)
	}
	return g
}

// ConsumerList names consumers for a table cell: "component namespace/pod (stale)", comma-separated.
func ConsumerList(cs []Consumer) string {
	if len(cs) == 0 {
		return "-"
	}
	var out []string
	for _, c := range cs {
		s := c.Component
		if c.Pod != "" {
			s += " " + c.Pod
		}
		if c.Node != "" && c.Pod == "" {
			s += " on " + c.Node
		}
		switch {
		case c.Looping:
			s += fmt.Sprintf(" (crash-looping, %d starts)", c.Restarts)
		case c.Stale:
			s += " (stale)"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// SARIF renders the findings as SARIF 2.1.0.
func (r *Report) SARIF() any {
	return finding.SARIF(finding.Tool{Name: "credwatch cloud", Version: r.ToolVersion}, r.Findings)
}

// WriteJUnit renders one test case per credential, plus "inputs" and "symptoms".
func (r *Report) WriteJUnit(w io.Writer) error {
	failOn := r.FailOn
	if failOn == "" {
		failOn = catalogue.Error
	}
	order := append([]string(nil), r.order...)
	for _, n := range []string{"inputs", "symptoms"} {
		if _, ok := r.byCase[n]; !ok {
			order = append(order, n)
		}
	}
	cases := r.byCase
	if len(r.InputErrors) > 0 {
		// A --config path that could not be read or parsed fails "inputs" whatever --fail-on
		// says: the run exits 2, and a passing case would read as a clean input.
		cases = maps.Clone(r.byCase)
		cases["inputs"] = slices.Clone(cases["inputs"])
		for _, e := range r.InputErrors {
			cases["inputs"] = append(cases["inputs"], finding.Finding{ID: "bad-input", Severity: catalogue.Critical,
				Title: "a --config path could not be read or parsed", Message: e, Explanation: e,
				Remedy: "fix the file or leave it out of --config"})
		}
	}
	return finding.WriteJUnit(w, "credwatch cloud", order, cases, r.untested(cases, failOn), failOn)
}

// untested maps each credential's case that no login tested (--no-login, nothing to test with)
// and that fails on nothing else to why: JUnit's <skipped/>, so that a pipeline does not count
// a credential never tried as a passing test.
func (r *Report) untested(cases map[string][]finding.Finding, failOn catalogue.Severity) map[string]string {
	out := map[string]string{}
	for i := range r.Items {
		it := &r.Items[i]
		name := caseName(it)
		if it.Test.Verdict != NotTested || finding.AnyAtLeast(cases[name], failOn) {
			continue
		}
		why := "not tested"
		if it.Test.Detail != "" {
			why += ": " + it.Test.Detail
		}
		out[name] = why
	}
	return out
}
