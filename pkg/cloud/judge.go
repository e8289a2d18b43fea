// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

// Report is the result of `credwatch cloud`.
type Report struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Time       time.Time `json:"time"`
	Inventory
	// Login says how live logins were made (or that --no-login skipped them).
	Login         string            `json:"login"`
	LoginAttempts int               `json:"loginAttempts"`
	Findings      []finding.Finding `json:"findings"`
	// BadInput: a --config path could not be read or parsed (exit code 2 when nothing worse).
	BadInput    bool               `json:"badInput,omitempty"`
	InputErrors []string           `json:"inputErrors,omitempty"`
	FailOn      catalogue.Severity `json:"-"`
	// ToolVersion is credwatch's version, for SARIF's tool.driver.version (set by the command).
	ToolVersion string `json:"-"`

	byCase map[string][]finding.Finding
	order  []string
}

// Judge turns what Fetch observed into the report: each credential's action and findings, the
// config problems and the symptoms. It is a pure function of obs and does not change it.
func Judge(obs *Observation, failOn catalogue.Severity) *Report {
	r := &Report{APIVersion: report.APIVersion, Kind: "CloudReport", Time: obs.Time, FailOn: failOn,
		Inventory: obs.Inventory, Login: obs.Login, LoginAttempts: obs.LoginAttempts,
		InputErrors: obs.InputErrors, BadInput: len(obs.InputErrors) > 0, byCase: map[string][]finding.Finding{}}
	r.Items = slices.Clone(obs.Items)
	for i := range r.Items {
		r.Items[i].decideAction()
		r.add(caseName(&r.Items[i]), itemFindings(&r.Items[i])...)
	}
	for _, p := range r.Problems {
		r.add("inputs", finding.New(IDConfigInvalid, p.Input+": "+p.Message).On("", p.Input))
	}
	secrets := passwords(r.Items)
	r.Inventory.Components = cutExits(r.Inventory.Components, secrets)
	r.add("symptoms", scrubSecrets(obs.symptomFindings(secrets), r.Items)...)
	finding.Sort(r.Findings)
	if r.Findings == nil {
		r.Findings = []finding.Finding{}
	}
	if r.Items == nil {
		r.Items = []Item{}
	}
	return r
}

func caseName(it *Item) string {
	return fmt.Sprintf("%s %s (%s)", it.Provider, it.Account(), it.Source)
}

func (r *Report) add(name string, fs ...finding.Finding) {
	if _, ok := r.byCase[name]; !ok {
		r.order = append(r.order, name)
	}
	r.byCase[name] = append(r.byCase[name], fs...)
	r.Findings = append(r.Findings, fs...)
}

func providerName(p Provider) string {
	if p == VSphere {
		return "vCenter"
	}
	return "Keystone"
}

func itemFindings(it *Item) []finding.Finding {
	var out []finding.Finding
	obj := it.Source.String()
	ev := []finding.Evidence{{Object: obj, Key: "account", Value: it.Account()}}
	if it.Config != nil {
		ev = append(ev, finding.Evidence{Object: obj, Key: "named by", Value: it.Config.String()})
	}
	for _, c := range it.Consumers {
		ev = append(ev, finding.Evidence{Member: c.Node, Object: c.Ref(), Key: "consumer " + c.Component, Value: c.How})
	}
	if it.Insecure {
		ev = append(ev, finding.Evidence{Object: obj, Key: "tls", Value: "not verified (the config's insecure flag)"})
	}
	switch it.Test.Verdict {
	case Rejected:
		f := finding.New(IDRejected, fmt.Sprintf("%s rejected %s (%s) from %s: %s. %s",
			providerName(it.Provider), it.Account(), it.Test.Fault, obj, it.Test.Detail, capitalize(it.Action)), ev...)
		out = append(out, f.On("", obj))
	case Unreachable:
		f := finding.New(IDUnreachable, fmt.Sprintf("%s %s could not be tested (%s): %s", providerName(it.Provider), it.Account(), orDash(it.Test.Fault), it.Test.Detail), ev...)
		out = append(out, f.On("", obj))
	}
	if plaintextLogin(it.Credential) {
		secret := "password"
		if it.AppCredentialID != "" || it.AppCredentialName != "" {
			secret = "application-credential secret"
		}
		f := finding.New(IDPlaintext, fmt.Sprintf("%s %s logs in over plain http: its %s crosses the network unencrypted at every login",
			providerName(it.Provider), it.Account(), secret), ev...)
		out = append(out, f.On("", obj))
	}
	for _, c := range it.Consumers {
		if c.Looping {
			out = append(out, loopFinding(it, c))
		}
		if !c.Stale {
			continue
		}
		changed := "-"
		if it.Source.Changed != nil {
			changed = it.Source.Changed.UTC().Format(time.RFC3339)
		}
		who := strings.TrimSpace(c.Component + " " + c.Ref())
		if c.Pod == "" && c.Node != "" {
			who += " on node " + c.Node
		}
		f := finding.New(IDConsumerStale, fmt.Sprintf("%s started %s, before %s last changed (%s); it reads the credential only at start-up: restart it: %s",
			who, c.Started.UTC().Format(time.RFC3339), obj, changed, c.Restart),
			finding.Evidence{Member: c.Node, Object: c.Ref(), Key: "started", Value: c.Started.UTC().Format(time.RFC3339)},
			finding.Evidence{Object: obj, Key: "changed", Value: changed},
			finding.Evidence{Object: c.Ref(), Key: "restart", Value: c.Restart})
		out = append(out, f.On(c.Node, c.Ref()))
	}
	return out
}

// loopFinding is kubelet-crashloop for c, a kubelet that restarts in a loop reading its file.
func loopFinding(it *Item, c Consumer) finding.Finding {
	cause := "whether the provider accepts it was not tested"
	switch it.Test.Verdict {
	case Rejected:
		cause = fmt.Sprintf("%s rejects %s (%s): with an in-tree provider and zones ([Labels]) the kubelet logs in at every start to read "+
			"its node's zone, and exits when the login fails", providerName(it.Provider), it.Account(), it.Test.Fault)
	case Valid:
		cause = "the provider accepts it, so the loop has another cause: its log says why (\"Kubelet failed to get node info\" err=...)"
	}
	f := finding.New(IDKubeletCrashLoop, fmt.Sprintf("%s; %s. %s", capitalize(c.How), cause, capitalize(it.Action)),
		finding.Evidence{Member: c.Node, Key: "kubelet starts (Starting Events)", Value: fmt.Sprint(c.Restarts)},
		finding.Evidence{Member: c.Node, Object: it.Source.String(), Key: "credential read", Value: it.Account()})
	f.Object = "node/" + c.Node
	return f
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// plaintextLogin says whether c sends its secret to Keystone over plain http.
func plaintextLogin(c Credential) bool {
	if c.Provider != OpenStack || !c.PasswordSet {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(c.Server))
	return err == nil && strings.EqualFold(u.Scheme, "http")
}
