// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package audit

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/report"
)

// WriteTable renders the report for people. Every value read from a log goes through
// redact.Printable; the document as a whole goes through the redaction writer (report.Print).
func (r *Report) WriteTable(w io.Writer, o report.TableOptions) error {
	if r.Mode == ModeIssued {
		return r.writeIssued(w, o)
	}
	for i, c := range r.Credentials {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := writeCredential(w, o, c); err != nil {
			return err
		}
	}
	return r.writeFooter(w)
}

func writeCredential(w io.Writer, o report.TableOptions, c *Credential) error {
	if _, err := fmt.Fprintf(w, "CREDENTIAL %s\n", p(c.ID)); err != nil {
		return err
	}
	if err := o.Hang(w, "  ", "  ", p(c.Summary)); err != nil {
		return err
	}
	if len(c.Issued) > 0 {
		g := report.NewGrid("  ", report.Col{Name: "ISSUED BY"}, report.Col{Name: "TIME"}, report.Col{Name: "SERVICE ACCOUNT"},
			report.Col{Name: "REQUESTER"}, report.Col{Name: "BOUND TO"}, report.Col{Name: "LEVEL"})
		for _, is := range c.Issued {
			g.Row(p(is.Member), stamp(is.Time), p(orDash(is.ServiceAccount)), p(report.OrDash(is.Requester)), bound(is), p(is.Level))
		}
		if err := g.Write(w, o); err != nil {
			return err
		}
	}
	if len(c.Used) > 0 {
		g := report.NewGrid("  ", report.Col{Name: "USED AT"}, report.Col{Name: "REQUESTS"}, report.Col{Name: "DENIED"},
			report.Col{Name: "FIRST"}, report.Col{Name: "LAST"}, report.Col{Name: "USER"}, report.Col{Name: "POD"}, report.Col{Name: "NODE"})
		for _, u := range c.Used {
			g.Row(p(u.Member), strconv.FormatInt(u.Count, 10), strconv.FormatInt(u.Denied, 10), stamp(u.First), stamp(u.Last),
				p(report.OrDash(u.User)), p(report.OrDash(u.Pod)), p(report.OrDash(u.Node)))
		}
		if err := g.Write(w, o); err != nil {
			return err
		}
	}
	if len(c.Rejected) > 0 {
		g := report.NewGrid("  ", report.Col{Name: "401 AT"}, report.Col{Name: "COUNT"}, report.Col{Name: "FIRST"},
			report.Col{Name: "LAST"}, report.Col{Name: "CLIENT"}, report.Col{Name: "USER AGENT"})
		for _, rj := range c.Rejected {
			g.Row(p(rj.Member), strconv.FormatInt(rj.Count, 10), stamp(rj.First), stamp(rj.Last),
				p(report.OrDash(rj.Client.IP)), p(report.OrDash(rj.Client.UserAgent)))
		}
		if err := g.Write(w, o); err != nil {
			return err
		}
	}
	return nil
}

func (r *Report) writeIssued(w io.Writer, o report.TableOptions) error {
	members := make([]string, 0, len(r.IssuedPerMember))
	for m := range r.IssuedPerMember {
		members = append(members, m)
	}
	sort.Strings(members)
	counts := make([]string, len(members))
	for i, m := range members {
		counts[i] = fmt.Sprintf("%s %d", p(m), r.IssuedPerMember[m])
	}
	if len(members) == 0 {
		counts = []string{"none"}
	}
	if _, err := fmt.Fprintf(w, "ISSUED CREDENTIAL IDS per member: %s\n", strings.Join(counts, ", ")); err != nil {
		return err
	}
	if len(r.Issued) > 0 {
		g := report.NewGrid("", report.Col{Name: "MEMBER"}, report.Col{Name: "TIME"}, report.Col{Name: "CREDENTIAL ID"},
			report.Col{Name: "SERVICE ACCOUNT"}, report.Col{Name: "REQUESTER"}, report.Col{Name: "BOUND TO"})
		for _, is := range r.Issued {
			g.Row(p(is.Member), stamp(is.Time), p(is.ID), p(orDash(is.ServiceAccount)), p(report.OrDash(is.Requester)), bound(is))
		}
		if err := g.Write(w, o); err != nil {
			return err
		}
	}
	if r.IssuedNotListed > 0 {
		if _, err := fmt.Fprintf(w, "%d more issued ids counted, not listed\n", r.IssuedNotListed); err != nil {
			return err
		}
	}
	return r.writeFooter(w)
}

// writeFooter says what was read and what the audit level allowed.
func (r *Report) writeFooter(w io.Writer) error {
	parts := make([]string, 0, len(r.Inputs))
	for _, in := range r.Inputs {
		if !in.Read {
			parts = append(parts, fmt.Sprintf("%s (not an audit log: skipped)", p(in.Name)))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %d lines)", p(in.Name), p(in.Member), in.Lines))
	}
	metadataOnly := slices.ContainsFunc(r.Issued, func(is Issue) bool { return is.Level == "Metadata" })
	for _, c := range r.Credentials {
		metadataOnly = metadataOnly || slices.ContainsFunc(c.Issued, func(is Issue) bool { return is.Level == "Metadata" })
	}
	if _, err := fmt.Fprintf(w, "\nRead: %s\n", strings.Join(parts, ", ")); err != nil {
		return err
	}
	if metadataOnly {
		if _, err := io.WriteString(w, "Note: a log at audit level Metadata names no bound object: log create on serviceaccounts/token at level Request to see the pod, secret or node a token is bound to\n"); err != nil {
			return err
		}
	}
	if r.ClientsNotTracked > 0 {
		if _, err := fmt.Fprintf(w, "Note: 401s from %d clients were not counted (too many clients)\n", r.ClientsNotTracked); err != nil {
			return err
		}
	}
	return nil
}

func bound(is Issue) string {
	o := is.BoundObject
	if o == nil {
		if is.Level == "Metadata" {
			return "? (level Metadata)"
		}
		return "-"
	}
	return p(strings.ToLower(o.Kind) + "/" + o.Name)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func p(s string) string { return redact.Printable(s) }
