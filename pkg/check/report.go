// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

const reportAPIVersion = report.APIVersion

// Report is the result of a check: the JSON/YAML document kind CheckReport (docs/check.md).
type Report struct {
	APIVersion   string             `json:"apiVersion"`
	Kind         string             `json:"kind"`
	Server       string             `json:"server"`
	CheckedAt    time.Time          `json:"checkedAt"`
	FailOn       catalogue.Severity `json:"failOn,omitempty"`
	Partial      bool               `json:"partial"`
	Unreachable  bool               `json:"unreachable"`
	Members      []Member           `json:"members"`
	ClusterAPI   *ClusterAPI        `json:"clusterAPI,omitempty"`
	Matrix       *Matrix            `json:"matrix,omitempty"`
	Tokens       []Row              `json:"tokens,omitempty"`
	PublicIssuer *PublicIssuer      `json:"publicIssuer,omitempty"`
	Differences  []Difference       `json:"differences"`
	Inventory    Inventory          `json:"inventory"`
	Liveness     Liveness           `json:"liveness"`
	Cloud        *Cloud             `json:"cloud,omitempty"`
	Findings     []finding.Finding  `json:"findings"`
	Skipped      []Skipped          `json:"skipped"`
	Sources      map[string]string  `json:"unavailable,omitempty"`
	// ToolVersion is credwatch's version, for SARIF's tool.driver.version (set by the command).
	ToolVersion string `json:"-"`

	order   []string
	byCheck map[string][]finding.Finding
}

// Difference is one configuration value that differs between members, and what follows from it.
type Difference struct {
	Field       string            `json:"field"`
	Values      map[string]string `json:"values"` // member -> value
	Consequence string            `json:"consequence"`
}

// Inventory is what tokens are in use.
type Inventory struct {
	Pods            int                `json:"pods"`
	ServiceAccounts int                `json:"serviceAccounts"`
	Projected       []ProjectedSummary `json:"projectedTokens"`
	LegacySecrets   int                `json:"legacySecrets"`
	LegacyUsed      int                `json:"legacySecretsUsed"`
	LegacyInvalid   int                `json:"legacySecretsMarkedInvalid"`
	LegacyMounted   int                `json:"legacySecretsMounted"`
	// Reads says how each list was read (pods, nodes, serviceaccounts, secrets): from the watch
	// cache, or a fallback to consistent pages. docs/check.md says what each may miss.
	Reads map[string]string `json:"reads,omitempty"`
}

// ProjectedSummary counts pods by projected-token audience and lifetime.
type ProjectedSummary struct {
	Audience          string `json:"audience"` // "" = the API audiences
	ExpirationSeconds int64  `json:"expirationSeconds"`
	Pods              int    `json:"pods"`
	// RefreshAfterSeconds is when the kubelet refreshes such a token (80% of its lifetime, at most 24 h).
	RefreshAfterSeconds int64 `json:"refreshAfterSeconds"`
}

// Liveness is the control plane's leases and nodes.
type Liveness struct {
	Leases             []Lease  `json:"leases"`
	Nodes              int      `json:"nodes"`
	UninitializedNodes []string `json:"uninitializedNodes,omitempty"`
}

func differences(s *Snapshot) []Difference {
	fields := []struct {
		name, consequence string
		get               func(Member) string
	}{
		{"version", "members on different lines log different messages for the same cause", func(m Member) string { return m.Version }},
		{"signing issuer", "tokens minted through one member carry an iss the others may not accept (member-issuer-drift)", signingIssuer},
		{"accepted issuers (--service-account-issuer)", "a member missing an issuer answers tokens with that iss with a bare \"invalid bearer token\"", func(m Member) string { return strings.Join(m.Issuers, ",") }},
		{"signing key (kid)", "tokens minted through one member fail signature checks on the others (member-key-drift)", func(m Member) string { return m.SigningKID }},
		{"JWKS kids", "members verify tokens with different key sets", func(m Member) string { return kidList(m.JWKS) }},
		{"API audiences", "tokens minted for one member's API audiences may be rejected by another (member-audience-drift)", func(m Member) string {
			a := slices.Clone(apiAudiences(m))
			sort.Strings(a)
			return strings.Join(a, ",")
		}},
		{"--service-account-max-token-expiration", "the same TokenRequest yields tokens of different lifetimes depending on the member", func(m Member) string { return m.MaxTokenExpiration }},
		{"--service-account-extend-token-expiration", "only some members extend 3607-s tokens to a year; clients that read tokens once break on some members first", func(m Member) string { return m.ExtendExpiration }},
		{"jwks_uri", "relying parties are pointed at different key documents", func(m Member) string {
			if m.Discovery == nil {
				return ""
			}
			if u, err := url.Parse(m.URL); err == nil && m.Discovery.JWKSURI == "https://"+u.Host+"/openid/v1/jwks" {
				return "(its own address)/openid/v1/jwks"
			}
			return m.Discovery.JWKSURI
		}},
	}
	var out []Difference
	for _, fd := range fields {
		vals := map[string]string{}
		distinct := map[string]bool{}
		for _, m := range s.Members {
			if !m.Reachable {
				continue
			}
			v := fd.get(m)
			if v == "unknown" || v == "" {
				continue // not known for this member
			}
			vals[m.Name] = v
			distinct[v] = true
		}
		if len(distinct) > 1 {
			out = append(out, Difference{Field: fd.name, Values: vals, Consequence: fd.consequence})
		}
	}
	if out == nil {
		out = []Difference{}
	}
	return out
}

func inventory(s *Snapshot) Inventory {
	inv := Inventory{Pods: len(s.Pods), ServiceAccounts: s.ServiceAccounts, LegacySecrets: len(s.LegacySecrets)}
	if len(s.Reads) > 0 {
		inv.Reads = maps.Clone(s.Reads)
	}
	type key struct {
		aud string
		exp int64
	}
	counts := map[key]int{}
	mounted := map[string]bool{}
	for _, p := range s.Pods {
		seen := map[key]bool{}
		for _, t := range p.Projected {
			k := key{t.Audience, t.ExpirationSeconds}
			if !seen[k] {
				seen[k] = true
				counts[k]++
			}
		}
		for _, v := range p.SecretVolumes {
			mounted[p.Namespace+"/"+v] = true
		}
	}
	for k, n := range counts {
		refresh := k.exp * 8 / 10
		if refresh > 24*3600 {
			refresh = 24 * 3600
		}
		inv.Projected = append(inv.Projected, ProjectedSummary{Audience: k.aud, ExpirationSeconds: k.exp, Pods: n, RefreshAfterSeconds: refresh})
	}
	sort.Slice(inv.Projected, func(i, j int) bool {
		a, b := inv.Projected[i], inv.Projected[j]
		if a.Pods != b.Pods {
			return a.Pods > b.Pods
		}
		return a.Audience+fmt.Sprint(a.ExpirationSeconds) < b.Audience+fmt.Sprint(b.ExpirationSeconds)
	})
	if inv.Projected == nil {
		inv.Projected = []ProjectedSummary{}
	}
	for _, sec := range s.LegacySecrets {
		if sec.LastUsed != "" {
			inv.LegacyUsed++
		}
		if sec.InvalidSince != "" {
			inv.LegacyInvalid++
		}
		if mounted[sec.Namespace+"/"+sec.Name] {
			inv.LegacyMounted++
		}
	}
	return inv
}

func livenessOf(s *Snapshot) Liveness {
	l := Liveness{Leases: s.Leases, Nodes: len(s.Nodes)}
	for _, n := range s.Nodes {
		if n.Uninitialized {
			l.UninitializedNodes = append(l.UninitializedNodes, n.Name)
		}
	}
	if l.Leases == nil {
		l.Leases = []Lease{}
	}
	return l
}

// SARIF renders the findings as SARIF 2.1.0.
func (r *Report) SARIF() any {
	return finding.SARIF(finding.Tool{Name: "credwatch check", Version: r.ToolVersion}, r.Findings)
}

// WriteJUnit renders one test case per check.
func (r *Report) WriteJUnit(w io.Writer) error {
	skipped := map[string]string{}
	for _, s := range r.Skipped {
		skipped[s.Check] = s.Reason
	}
	failOn := r.FailOn
	if failOn == "" {
		failOn = catalogue.Error
	}
	return finding.WriteJUnit(w, "credwatch check", r.order, r.byCheck, skipped, failOn)
}
