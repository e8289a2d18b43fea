// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

// Finding IDs of the external-signer check.
const (
	idSignerKeySets = "signer-key-sets-differ"
	idSignerStale   = "signer-keys-stale"
)

// signerRetry is how often kube-apiserver fetches its signer's keys again after a FetchKeys
// failed (fallbackRefreshDuration, k8s.io/kubernetes
// pkg/serviceaccount/externaljwt/plugin/keycache.go at v1.36.3, line 35).
const signerRetry = 10 * time.Second

// checkSigners judges the members that sign through an external JWT signer (KEP-740), known by
// the apiserver_externaljwt_* families of their /metrics: whether their signers serve the same
// keys (what each publishes in /openid/v1/jwks is its signer's FetchKeys answer, less the keys
// excluded from OIDC discovery) and whether each keeps its keys fresh.
func checkSigners(s *Snapshot) []finding.Finding {
	var signing []Member
	for _, m := range s.Members {
		if m.Reachable && m.Metrics != nil && m.Metrics.Signer != nil {
			signing = append(signing, m)
		}
	}
	out := signerKeySets(signing)
	for _, m := range signing {
		if f, ok := signerStale(s.Now, m); ok {
			out = append(out, f)
		}
	}
	return out
}

// kidSet is a member's published kids, sorted and joined ("" when its JWKS is unknown).
func kidSet(m Member) string {
	if m.JWKS == nil {
		return ""
	}
	ids := make([]string, 0, len(m.JWKS))
	for _, k := range m.JWKS {
		ids = append(ids, k.KID)
	}
	slices.Sort(ids)
	return strings.Join(slices.Compact(ids), ",")
}

// signerKeySets names each member whose signer serves another key set than most members'
// signers. Its severity is error when tokens break across the divide (the member signs with a key
// the others lack, or lacks the key they sign with), warning when the sets differ but each side
// still has the other's signing key (a key published ahead of a rotation on some members only).
// An even split names every member, at warning.
func signerKeySets(signing []Member) []finding.Finding {
	var sets []string
	count := map[string]int{}
	for _, m := range signing {
		sets = append(sets, kidSet(m))
		count[kidSet(m)]++
	}
	major, distinct := mostCommon(sets)
	if distinct < 2 {
		return nil
	}
	even := false
	for k, n := range count {
		even = even || k != "" && k != major && n == count[major]
	}
	majorSet := strings.Split(major, ",")
	var majorKIDs []string // what the members with the majority set sign with
	for _, m := range signing {
		if kidSet(m) == major {
			majorKIDs = append(majorKIDs, m.SigningKID)
		}
	}
	majorSigns, _ := mostCommon(majorKIDs)
	var out []finding.Finding
	for _, m := range signing {
		mine := kidSet(m)
		if mine == "" || (mine == major && !even) {
			continue
		}
		mySet := strings.Split(mine, ",")
		breaks := m.SigningKID != "" && !slices.Contains(majorSet, m.SigningKID) ||
			majorSigns != "" && !slices.Contains(mySet, majorSigns)
		ev := []finding.Evidence{
			{Member: m.Name, Key: "jwks kids", Value: kidList(m.JWKS)},
			{Key: "kids most members' signers serve", Value: shortKIDs(majorSet)},
		}
		if m.SigningKID != "" {
			ev = append(ev, finding.Evidence{Member: m.Name, Key: "signing kid", Value: m.SigningKID})
		}
		if ts := m.Metrics.Signer.DataTimestamp; ts > 0 {
			ev = append(ev, finding.Evidence{Member: m.Name, Key: metricFetchKeysData, Value: unixUTC(ts)})
		}
		msg := fmt.Sprintf("the external signer of member %s serves keys %s; most members' signers serve %s", m.Name, shortKIDs(mySet), shortKIDs(majorSet))
		if even {
			msg = fmt.Sprintf("the external signer of member %s serves keys %s; the members' signers split evenly between key sets", m.Name, shortKIDs(mySet))
		}
		switch {
		case breaks:
			msg += ": tokens minted through it and through the others are rejected across the divide (\"invalid signature, no keys found\"; the rejecting member logs \"Key id ... not found after refresh\"); make every signer serve the same keys"
		default:
			msg += ": each side still has the key the other signs with, so no token breaks yet; it will when a signer starts signing with a key only some serve"
		}
		f := finding.New(idSignerKeySets, msg, ev...).On(m.Name, m.URL)
		if breaks && !even {
			f = f.WithSeverity(catalogue.Error)
		}
		out = append(out, f)
	}
	return out
}

// signerStale raises signer-keys-stale for a member whose signer's FetchKeys has failed and whose
// key cache is past its refresh: its JWKS answers max-age=0 (kube-apiserver moves the next refresh
// only when a fetch succeeds) and its last successful fetch is older than the retry period.
func signerStale(now time.Time, m Member) (finding.Finding, bool) {
	sm := m.Metrics.Signer
	failed := sm.FetchKeysFailed()
	if failed == 0 || m.JWKSMaxAge == nil || *m.JWKSMaxAge != 0 || sm.FetchKeysSuccess <= 0 {
		return finding.Finding{}, false
	}
	last := time.Unix(0, int64(sm.FetchKeysSuccess*float64(time.Second)))
	age := now.Sub(last)
	if age <= signerRetry {
		return finding.Finding{}, false
	}
	var codes []string
	for _, c := range slices.Sorted(maps.Keys(sm.FetchKeys)) {
		if c != "OK" {
			codes = append(codes, fmt.Sprintf("%s %g", c, sm.FetchKeys[c]))
		}
	}
	return finding.New(idSignerStale, fmt.Sprintf(
		"member %s has not fetched its external signer's keys for %s (FetchKeys failed %g times: %s) and its keys are past their refresh: it verifies with the set it fetched last, so a key the signers rotate to is rejected there (\"invalid signature, no keys found\") until FetchKeys works again",
		m.Name, report.Duration(age), failed, strings.Join(codes, ", ")),
		finding.Evidence{Member: m.Name, Key: metricFetchKeysSuccess, Value: unixUTC(sm.FetchKeysSuccess)},
		finding.Evidence{Member: m.Name, Key: metricFetchKeysTotal, Value: strings.Join(codes, ", ")},
		finding.Evidence{Member: m.Name, Key: "jwks Cache-Control", Value: "max-age=0"},
	).On(m.Name, m.URL), true
}

func shortKIDs(kids []string) string {
	out := make([]string, len(kids))
	for i, k := range kids {
		out[i] = shortKID(k)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// unixUTC renders a Unix-seconds gauge as RFC 3339 (UTC, to the second).
func unixUTC(sec float64) string {
	return time.Unix(0, int64(sec*float64(time.Second))).UTC().Format(time.RFC3339)
}
