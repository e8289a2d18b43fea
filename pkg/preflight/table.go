// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"fmt"
	"io"
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

// WriteTable prints what was compared, the steps with their trust matrix, then the findings
// with their remedy and the notes.
func (r *Report) WriteTable(w io.Writer, o report.TableOptions) error {
	// What was compared is prose: it wraps at the width, its words whole.
	if err := o.Hang(w, "", "    ", fmt.Sprintf("Preflight of %s (%s): current %s, planned %s.", report.OrDash(r.Cluster), r.Source,
		strings.Join(r.Current.Files, ", "), strings.Join(r.Planned.Files, ", "))); err != nil {
		return err
	}
	const rest = "             "
	for _, s := range []struct {
		name string
		side Side
	}{{"current", r.Current}, {"planned", r.Planned}} {
		c := s.side.Creds
		if err := o.Hang(w, fmt.Sprintf("  %-8s ", s.name), rest, fmt.Sprintf("issuers %s; audiences %s; signs with %s",
			strings.Join(c.Issuers, ", "), strings.Join(c.Audiences, ", "), c.Signing)); err != nil {
			return err
		}
		if jc := s.side.JoinCreds; jc != nil {
			if err := o.Hang(w, rest[:11], rest, fmt.Sprintf("joined machines: issuers %s; signs with %s",
				strings.Join(jc.Issuers, ", "), jc.Signing)); err != nil {
				return err
			}
		}
	}
	if len(r.Steps) == 0 {
		fmt.Fprintln(w, "\nNo machine rolls.")
	} else {
		fmt.Fprintln(w)
		// The trust after each step is the verdict: it wraps on a terminal and is never cut. An
		// issuer that every step shares is the one the lines above name: -o wide's.
		g := report.NewGrid("", report.Col{Name: "STEP"}, report.Col{Name: "ACTION"}, report.Col{Name: "MACHINE"},
			report.Col{Name: "CONFIG", Wide: true}, report.Col{Name: "ISSUER", Flex: true, Repeats: true}, report.Col{Name: "KEY", Wide: true},
			report.Col{Name: "AUDIENCES", Wide: true}, report.Col{Name: "MEMBERS"}, report.Col{Name: "TRUST AFTER THE STEP", Wrap: true})
		for _, s := range r.Steps {
			iss, key, aud := "-", "-", "-"
			if s.Creds != nil {
				iss, key, aud = s.Creds.primary(), s.Creds.Signing, strings.Join(s.Creds.Audiences, ",")
			}
			g.Row(fmt.Sprint(s.N), s.Action, s.Machine, s.Config, iss, key, aud, membersCell(s), trustCell(s))
		}
		if err := g.Write(w, o); err != nil {
			return err
		}
	}
	if err := writeFindings(w, o, r.Findings); err != nil {
		return err
	}
	for _, n := range r.Notes {
		if err := o.Hang(w, "note: ", "    ", n); err != nil {
			return err
		}
	}
	for _, ig := range r.Ignored {
		if err := o.Hang(w, "ignored: ", "    ", ig.String()); err != nil {
			return err
		}
	}
	return nil
}

func writeFindings(w io.Writer, o report.TableOptions, fs []finding.Finding) error {
	if len(fs) == 0 {
		fmt.Fprintln(w, "\nNo findings.")
		return nil
	}
	fmt.Fprintln(w, "\nFindings:")
	for _, f := range fs {
		fmt.Fprintf(w, "  %-8s %s\n", strings.ToUpper(string(f.Severity)), f.ID)
		if err := o.Wrap(w, "           ", f.Message); err != nil {
			return err
		}
		if err := o.Wrap(w, "           ", "remedy: "+f.Remedy); err != nil {
			return err
		}
	}
	return nil
}

// SARIF renders the findings as SARIF 2.1.0.
func (r *Report) SARIF() any {
	return finding.SARIF(finding.Tool{Name: "credwatch preflight", Version: r.ToolVersion}, r.Findings)
}

// predictions are the catalogue IDs preflight reports, one JUnit test case each, in the order of
// checks() (TestPredictionIDs keeps the list and the checks' files together).
func predictions() []string {
	return []string{"rollout-planned", "issuer-change-drops-old", "issuer-switch-before-all-accept", "issuer-placeholder",
		"issuer-join-differs", "sa-key-unread", "sa-secret-missing", "sa-key-change", "audience-change-drops-old", "etcd-removed-before-drain",
		"lb-check-not-ready-aware", "in-place-update-possible", "legacy-token-secrets", "signer-with-key-files",
		"signer-max-lifetime-too-short", "signer-switch-without-old-keys", "authn-config-issuer-is-sa-issuer", "no-change"}
}

// WriteJUnit renders the prediction as JUnit XML: one test case per prediction, failed by a
// finding at or above FailOn (default error, as --fail-on).
func (r *Report) WriteJUnit(w io.Writer) error {
	failOn := r.FailOn
	if failOn == "" {
		failOn = catalogue.Error
	}
	byID := map[string][]finding.Finding{}
	for _, f := range r.Findings {
		byID[f.ID] = append(byID[f.ID], f)
	}
	return finding.WriteJUnit(w, "credwatch preflight", predictions(), byID, nil, failOn)
}
