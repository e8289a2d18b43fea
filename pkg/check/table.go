// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

// WriteTable renders the report for people: members, trust matrix, differences, tokens in use,
// liveness, findings and skipped checks.
func (r *Report) WriteTable(w io.Writer, o report.TableOptions) error {
	fmt.Fprintf(w, "Cluster %s, checked %s\n\n", r.Server, r.CheckedAt.Format("2006-01-02 15:04:05Z"))
	fmt.Fprintln(w, "MEMBERS")
	// Addresses, how a member was found and its API audiences are -o wide's: the name
	// identifies the member, and the issuer and keys are what drift.
	g := report.NewGrid("  ", report.Col{Name: "NAME"}, report.Col{Name: "URL", Wide: true}, report.Col{Name: "VERSION"},
		report.Col{Name: "FOUND BY", Wide: true}, report.Col{Name: "SIGNING ISSUER", Flex: true}, report.Col{Name: "SIGNING KID"},
		report.Col{Name: "JWKS KIDS", Flex: true}, report.Col{Name: "API AUDIENCES", Wide: true}, report.Col{Name: "AUTH OK/FAIL/ERR"})
	for _, m := range r.Members {
		if !m.Reachable {
			g.Row(m.Name, m.URL, "unreachable", strings.Join(m.FoundBy, ","), "-", "-", "-", "-", "-")
			continue
		}
		g.Row(m.Name, m.URL, orDash(m.Version), strings.Join(m.FoundBy, ","), orDash(signingIssuer(m)),
			shortKID(m.SigningKID), jwksCell(m), orDash(strings.Join(apiAudiences(m), ",")), authCell(m.Metrics))
	}
	if err := g.Write(w, o); err != nil {
		return err
	}
	if err := writeMachines(w, o, r.ClusterAPI); err != nil {
		return err
	}
	if r.Matrix != nil {
		fmt.Fprintf(w, "\nTRUST MATRIX (row: token minted through; column: member reviewing it; probe %s)\n", r.Matrix.ServiceAccount)
		writeMatrix(w, r.Matrix.Members, r.Matrix.Rows)
	}
	if len(r.Tokens) > 0 {
		fmt.Fprintln(w, "\nYOUR TOKENS (reviewed by each member)")
		var names []string
		for _, m := range r.Members {
			names = append(names, m.Name)
		}
		writeMatrix(w, names, r.Tokens)
		for _, t := range r.Tokens {
			fmt.Fprintf(w, "  %s: %s\n", t.Token, t.Summary)
		}
	}
	if p := r.PublicIssuer; p != nil {
		fmt.Fprintf(w, "\nPUBLIC ISSUER %s\n", p.Issuer)
		if p.Error != "" {
			fmt.Fprintf(w, "  could not fetch: %s\n", p.Error)
		} else {
			fmt.Fprintf(w, "  discovery issuer %s, jwks_uri %s, kids %s\n", p.Discovery.Issuer, p.JWKSURL, kidList(p.JWKS))
		}
	}
	if len(r.Differences) > 0 {
		fmt.Fprintln(w, "\nDIFFERENCES BETWEEN MEMBERS")
		for _, d := range r.Differences {
			fmt.Fprintf(w, "  %s: %s\n", d.Field, d.Consequence)
			names := make([]string, 0, len(d.Values))
			for n := range d.Values {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				fmt.Fprintf(w, "    %-20s %s\n", n, orDash(d.Values[n]))
			}
		}
	}
	inv := r.Inventory
	fmt.Fprintf(w, "\nTOKENS IN USE\n  %d pods, %d service accounts; legacy token secrets: %d (%d used, %d mounted, %d marked invalid)\n",
		inv.Pods, inv.ServiceAccounts, inv.LegacySecrets, inv.LegacyUsed, inv.LegacyMounted, inv.LegacyInvalid)
	for i, p := range inv.Projected {
		if i == 5 {
			fmt.Fprintf(w, "  ... %d more projected-token shapes (-o json)\n", len(inv.Projected)-5)
			break
		}
		aud := p.Audience
		if aud == "" {
			aud = "(API audiences)"
		}
		fmt.Fprintf(w, "  projected token aud %s, %ds (kubelet refreshes after %s): %d pods\n", aud, p.ExpirationSeconds,
			report.Duration(secs(p.RefreshAfterSeconds)), p.Pods)
	}
	fmt.Fprintln(w, "\nCONTROL PLANE")
	for _, l := range r.Liveness.Leases {
		if !l.Found {
			fmt.Fprintf(w, "  lease %s: not found\n", l.Name)
			continue
		}
		fmt.Fprintf(w, "  lease %s: held by %s, renewed %s\n", l.Name, orDash(l.Holder), report.Relative(l.RenewTime, r.CheckedAt))
	}
	fmt.Fprintf(w, "  nodes: %d (%d uninitialized)\n", r.Liveness.Nodes, len(r.Liveness.UninitializedNodes))
	if err := writeCloud(w, r.Cloud, o); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nFINDINGS")
	if len(r.Findings) == 0 {
		fmt.Fprintln(w, "  none")
	}
	// Findings that say the same about several members or checks are one line (-o json keeps
	// each); a long message wraps, whole.
	for _, g := range finding.Collapse(r.Findings) {
		where := ""
		switch {
		case len(g.Where) == 1:
			where = " [" + g.Where[0] + "]"
		case len(g.Where) > 1:
			where = fmt.Sprintf(" [%d: %s]", len(g.Where), strings.Join(g.Where, ", "))
		case g.Count > 1:
			where = fmt.Sprintf(" (%d)", g.Count)
		}
		fmt.Fprintf(w, "  %-8s %s%s\n", strings.ToUpper(string(g.Severity)), g.ID, where)
		if err := o.Wrap(w, "           ", g.Message); err != nil {
			return err
		}
		if g.Severity.Rank() >= 2 {
			if err := o.Wrap(w, "           ", "remedy: "+strings.TrimSpace(g.Remedy)); err != nil {
				return err
			}
		}
	}
	if r.Partial {
		fmt.Fprintln(w, "\nPARTIAL: some core checks did not run; the absence of findings proves nothing (exit code 3).")
	}
	return nil
}

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }

func writeMatrix(w io.Writer, members []string, rows []Row) {
	tw := report.NewTabWriter(w)
	head := []string{"  "}
	head = append(head, members...)
	report.Row(tw, head...)
	for _, r := range rows {
		label := r.Via
		if label == "" {
			label = r.Token
		}
		cells := []string{"  " + label}
		for _, c := range r.Cells {
			switch {
			case c.Accepted:
				cells = append(cells, "ok")
			default:
				cells = append(cells, c.Cause)
			}
		}
		report.Row(tw, cells...)
	}
	_ = tw.Flush()
}

func jwksCell(m Member) string {
	if m.JWKS == nil {
		if m.JWKSErr != "" {
			return "unavailable"
		}
		return "-"
	}
	return kidList(m.JWKS)
}

func authCell(mt *Metrics) string {
	if mt == nil || mt.AuthAttempts == nil {
		return "-"
	}
	a := mt.AuthAttempts
	return fmt.Sprintf("%g/%g/%g", a["success"], a["failure"], a["error"])
}
