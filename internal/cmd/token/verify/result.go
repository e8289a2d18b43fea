// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package verify

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/report"
	"github.com/credwatch/credwatch/pkg/token"
)

// Result is the TokenVerification document (docs/json.md; hack/schemagen writes its JSON Schema).
type Result struct {
	APIVersion   string    `json:"apiVersion"`
	Kind         string    `json:"kind"`
	Source       string    `json:"source"`
	KubeVersion  string    `json:"kubeVersion"`
	At           time.Time `json:"at"`
	Token        summary   `json:"token"`
	Issuers      []string  `json:"issuers"`
	APIAudiences []string  `json:"apiAudiences"`
	KeyIDs       []string  `json:"keyIDs"`
	token.Verdict
}

type summary struct {
	Type      string   `json:"type"`
	Algorithm string   `json:"alg"`
	KeyID     string   `json:"kid,omitempty"`
	Issuer    string   `json:"iss,omitempty"`
	Subject   string   `json:"sub,omitempty"`
	Audience  []string `json:"aud,omitempty"`
}

func newResult(source string, t *token.Token, o token.VerifyOptions, d token.Verdict) Result {
	typ, _ := t.Classify()
	auds := o.APIAudiences
	if len(auds) == 0 {
		auds = o.Issuers
	}
	kids := make([]string, len(o.Keys))
	for i, k := range o.Keys {
		kids[i] = k.KeyID
	}
	return Result{
		APIVersion: report.APIVersion, Kind: "TokenVerification", Source: source,
		KubeVersion: o.Version.String(), At: o.At.UTC(),
		Token:   summary{Type: typ, Algorithm: t.Header.Algorithm, KeyID: t.Header.KeyID, Issuer: t.Claims.Issuer, Subject: t.Claims.Subject, Audience: t.Claims.Audience},
		Issuers: o.Issuers, APIAudiences: auds, KeyIDs: kids, Verdict: d,
	}
}

func (r Result) WriteTable(w io.Writer, _ report.TableOptions) error {
	tw := report.NewTabWriter(w)
	row := func(k, v string) { report.Row(tw, k+":", v) }
	verdict := strings.ToUpper(r.Verdict.Verdict)
	if r.Verdict.Verdict == token.Accepted && len(r.NeedsCluster) > 0 {
		verdict += " (every offline check passes; kube-apiserver still does the lookups under \"Needs cluster\")"
	}
	row("Verdict", verdict)
	if r.Cause != "" {
		title := ""
		if e, ok := catalogue.Default().Get(r.Cause); ok {
			title = " (" + e.Title + ")"
		}
		row("Cause", r.Cause+title)
		msg := r.Message
		if msg == "" {
			msg = "(none: no authenticator claimed the token, so only the bare \"invalid bearer token\" is logged)"
		}
		row("Message", token.Printable(msg))
		row("Log line", r.LogSource+"] "+r.LogLine)
	}
	row("Kube-apiserver", fmt.Sprintf("%s, clock %s", r.KubeVersion, r.At.Format(time.RFC3339)))
	row("Token", fmt.Sprintf("%s, alg %s, kid %s, iss %s", r.Token.Type, r.Token.Algorithm, dash(r.Token.KeyID), dash(r.Token.Issuer)))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nSteps:")
	tw = report.NewTabWriter(w)
	for _, s := range r.Steps {
		report.Row(tw, "  "+s.Name, s.Result, s.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, it := range items {
			fmt.Fprintf(w, "  - %s\n", token.Printable(it))
		}
	}
	list("Needs cluster (kube-apiserver checks these next; credwatch cannot offline)", r.NeedsCluster)
	list("Notes", r.Notes)
	if r.Cause != "" {
		if e, ok := catalogue.Default().Get(r.Cause); ok {
			fmt.Fprintf(w, "\nRemedy: %s\n", strings.TrimSpace(e.Remedy))
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return token.Printable(s)
}
