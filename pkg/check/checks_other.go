// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/liveness"
	"github.com/credwatch/credwatch/pkg/report"
)

func checkPublicIssuer(s *Snapshot) []finding.Finding {
	p := s.Public
	if p == nil || p.Discovery == nil {
		return nil // no public issuer: nothing to check
	}
	var out []finding.Finding
	if p.Discovery.Issuer != p.Issuer {
		out = append(out, finding.New(idPublicMismatch, fmt.Sprintf(
			"the discovery document at %s says issuer %q, but members put %q into tokens: relying parties (cloud STS, vault) reject every token%s",
			p.DiscoveryURL, p.Discovery.Issuer, p.Issuer, alike(p.Discovery.Issuer, p.Issuer)),
			finding.Evidence{Object: p.DiscoveryURL, Key: "issuer", Value: p.Discovery.Issuer},
			finding.Evidence{Key: "token iss", Value: p.Issuer}).On("", p.DiscoveryURL))
	}
	published := map[string]bool{}
	for _, k := range p.JWKS {
		published[k.KID] = true
	}
	signers := map[string][]string{}
	used := map[string]bool{}
	for _, m := range s.Members {
		if !m.Reachable {
			continue
		}
		if m.SigningKID != "" {
			signers[m.SigningKID] = append(signers[m.SigningKID], m.Name)
			used[m.SigningKID] = true
		}
		for _, k := range m.JWKS {
			used[k.KID] = true
		}
	}
	kids := make([]string, 0, len(signers))
	for k := range signers {
		kids = append(kids, k)
	}
	sort.Strings(kids)
	for _, kid := range kids {
		if published[kid] {
			continue
		}
		ms := signers[kid]
		out = append(out, finding.New(idPublicMissing, fmt.Sprintf(
			"key %s, which %s sign(s) tokens with, is not published at %s: relying parties that verify against the public JWKS reject tokens minted there",
			kid, strings.Join(ms, ", "), p.JWKSURL),
			finding.Evidence{Member: strings.Join(ms, ","), Key: "signing kid", Value: kid},
			finding.Evidence{Object: p.JWKSURL, Key: "published kids", Value: kidList(p.JWKS)}).On(ms[0], p.JWKSURL))
	}
	for _, k := range p.JWKS {
		if used[k.KID] {
			continue
		}
		out = append(out, finding.New(idPublicStale, fmt.Sprintf(
			"key %s is published at %s but no member signs with or accepts it: relying parties still trust tokens signed with a retired key",
			k.KID, p.JWKSURL), finding.Evidence{Object: p.JWKSURL, Key: "kid", Value: k.KID}).On("", p.JWKSURL))
	}
	return out
}

const maxEvidence = 10

func checkLegacyTokens(s *Snapshot) []finding.Finding {
	mounts := map[string][]string{} // ns/secret -> pods
	for _, p := range s.Pods {
		for _, v := range p.SecretVolumes {
			k := p.Namespace + "/" + v
			mounts[k] = append(mounts[k], p.Namespace+"/"+p.Name)
		}
	}
	var used, mounted, invalidMounted int
	var ev []finding.Evidence
	for _, sec := range s.LegacySecrets {
		k := sec.Namespace + "/" + sec.Name
		pods := mounts[k]
		if sec.LastUsed != "" {
			used++
		}
		if len(pods) > 0 {
			mounted++
			if sec.InvalidSince != "" {
				invalidMounted++
			}
		}
		if (sec.LastUsed != "" || len(pods) > 0) && len(ev) < maxEvidence {
			v := "last used " + orDash(sec.LastUsed)
			if sec.InvalidSince != "" {
				v += ", invalid since " + sec.InvalidSince
			}
			if len(pods) > 0 {
				v += ", mounted by " + strings.Join(firstN(pods, 3), ",")
				if len(pods) > 3 {
					v += fmt.Sprintf(" and %d more", len(pods)-3)
				}
			}
			ev = append(ev, finding.Evidence{Object: "secret/" + k, Key: "serviceaccount " + sec.ServiceAccount, Value: v})
		}
	}
	var metric float64
	for _, m := range s.Members {
		if m.Metrics != nil && m.Metrics.LegacyTokens > 0 {
			metric += m.Metrics.LegacyTokens
			ev = append(ev, finding.Evidence{Member: m.Name, Key: "serviceaccount_legacy_tokens_total", Value: fmt.Sprint(m.Metrics.LegacyTokens)})
		}
	}
	if used == 0 && mounted == 0 && metric == 0 {
		return nil
	}
	msg := fmt.Sprintf("%d legacy secret-based token(s): %d used (kubernetes.io/legacy-token-last-used), %d mounted by pods; members counted %g legacy-token authentications. These tokens never expire and are signed by kube-controller-manager's key",
		len(s.LegacySecrets), used, mounted, metric)
	f := finding.New(idLegacyTokens, msg, ev...)
	if invalidMounted > 0 {
		f.Message += fmt.Sprintf("; %d secret(s) marked kubernetes.io/legacy-token-invalid-since are still mounted: those pods' tokens are rejected", invalidMounted)
		f = f.WithSeverity(catalogue.Error)
	}
	return []finding.Finding{f}
}

func checkStaleTokens(s *Snapshot) []finding.Finding {
	var ev []finding.Evidence
	var total float64
	for _, m := range s.Members {
		if m.Metrics != nil && m.Metrics.StaleTokens > 0 {
			total += m.Metrics.StaleTokens
			ev = append(ev, finding.Evidence{Member: m.Name, Key: "serviceaccount_stale_tokens_total", Value: fmt.Sprint(m.Metrics.StaleTokens)})
		}
	}
	if total == 0 {
		return nil
	}
	return []finding.Finding{finding.New(idStaleTokens, fmt.Sprintf(
		"members counted %g uses of extended tokens past their warnafter: some clients do not re-read their projected token; they break when the one-year extension ends or when a member stops extending",
		total), ev...)}
}

func checkControllers(s *Snapshot) []finding.Finding {
	var out []finding.Finding
	for _, l := range s.Leases {
		if !l.Stale && l.TookOverRecently(s.Now) {
			out = append(out, finding.New(idTakeover, fmt.Sprintf(
				"%s took its lease kube-system/%s over %s ago (transition %d, holder %s): the controller restarted or another instance took over; if it repeats, it is crash-looping",
				l.Name, l.Name, report.Duration(s.Now.Sub(l.Acquired)), l.Transitions, orDash(l.Holder)),
				finding.Evidence{Object: "lease/kube-system/" + l.Name, Key: "acquireTime", Value: l.Acquired.UTC().Format(time.RFC3339)},
				finding.Evidence{Object: "lease/kube-system/" + l.Name, Key: "leaseTransitions", Value: fmt.Sprint(l.Transitions)}).On("", "lease/kube-system/"+l.Name))
		}
		if !l.Found || !l.Stale {
			continue
		}
		out = append(out, finding.New(idControllers, fmt.Sprintf(
			"%s has not renewed its lease kube-system/%s for %s (lease duration %s, last holder %s): %s",
			l.Name, l.Name, report.Duration(s.Now.Sub(l.RenewTime)), report.Duration(l.Duration), orDash(l.Holder), liveness.Stops(l.Name)),
			finding.Evidence{Object: "lease/kube-system/" + l.Name, Key: "renewTime", Value: l.RenewTime.UTC().Format(time.RFC3339)},
			finding.Evidence{Object: "lease/kube-system/" + l.Name, Key: "holderIdentity", Value: orDash(l.Holder)}).On("", "lease/kube-system/"+l.Name))
	}
	return out
}

func checkNodes(s *Snapshot) []finding.Finding {
	var tainted []string
	for _, n := range s.Nodes {
		if n.Uninitialized {
			tainted = append(tainted, n.Name)
		}
	}
	if len(tainted) == 0 {
		return nil
	}
	var pending []string
	for _, p := range s.Pods {
		if p.Phase == "Pending" && p.Node == "" && liveness.BlockedByUninitialized(p.UnschedulableMsg, p.ToleratesUninit) {
			pending = append(pending, p.Namespace+"/"+p.Name)
		}
	}
	sort.Strings(tainted)
	ev := []finding.Evidence{{Key: "nodes with " + taintUninit, Value: strings.Join(firstN(tainted, maxEvidence), ",")}}
	msg := fmt.Sprintf("%d node(s) still carry %s: the cloud controller manager has not initialized them (is it running, can it log in to the cloud?)", len(tainted), taintUninit)
	f := finding.New(idNodesUninit, msg, ev...)
	if len(pending) > 0 {
		sort.Strings(pending)
		f.Message += fmt.Sprintf("; %d Pod(s) are Pending because of it", len(pending))
		f.Evidence = append(f.Evidence, finding.Evidence{Key: "pending pods", Value: strings.Join(firstN(pending, maxEvidence), ",")})
		f = f.WithSeverity(catalogue.Error)
	}
	if len(tainted) == 1 {
		f.Object = "node/" + tainted[0]
	}
	return []finding.Finding{f}
}

func firstN(v []string, n int) []string {
	if len(v) <= n {
		return v
	}
	return v[:n]
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
