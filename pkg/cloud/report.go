package cloud

import (
	"fmt"
	"io"
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

// WriteTable prints the credentials, then the findings, then notes.
func (r *Report) WriteTable(w io.Writer) error {
	tw := report.NewTabWriter(w)
	if len(r.Items) == 0 {
		fmt.Fprintln(tw, "No cloud credentials found.")
	} else {
		report.Row(tw, "PROVIDER", "ACCOUNT", "SOURCE", "VERDICT", "CONSUMERS", "ACTION")
		for _, it := range r.Items {
			verdict := string(it.Test.Verdict)
			if it.Test.Fault != "" {
				verdict += " (" + it.Test.Fault + ")"
			}
			if it.Insecure {
				verdict += " [tls not verified]"
			}
			report.Row(tw, string(it.Provider), it.Account(), it.Source.String(), verdict, ConsumerList(it.Consumers), it.Action)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nLogins: %s (%d attempt(s)).\n", r.Login, r.LoginAttempts)
	if len(r.Findings) > 0 {
		fmt.Fprintln(w, "\nFindings:")
		for _, f := range r.Findings {
			fmt.Fprintf(w, "  %-8s %s: %s\n", strings.ToUpper(string(f.Severity)), f.ID, f.Message)
			fmt.Fprintf(w, "           remedy: %s\n", f.Remedy)
		}
	} else {
		fmt.Fprintln(w, "\nNo findings.")
	}
	for _, it := range r.Items {
		if it.Test.Verdict == NotTested && it.Test.Detail != "" && it.Test.Detail != "--no-login" {
			fmt.Fprintf(w, "note: %s: not tested: %s\n", it.Account(), it.Test.Detail)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	for _, e := range r.InputErrors {
		fmt.Fprintln(w, "bad input: "+e)
	}
	for _, e := range r.Errors {
		fmt.Fprintln(w, "partial: "+e)
	}
	return nil
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
		if c.Stale {
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
	return finding.WriteJUnit(w, "credwatch cloud", order, r.byCase, nil, failOn)
}
