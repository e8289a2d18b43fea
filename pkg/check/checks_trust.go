// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/redact"
)

// Finding IDs this package raises (catalogue entries of kind finding).
const (
	idKeyDrift       = "member-key-drift"
	idIssuerDrift    = "member-issuer-drift"
	idAudienceDrift  = "member-audience-drift"
	idPublicMissing  = "public-jwks-missing-key"
	idPublicStale    = "public-jwks-stale-key"
	idPublicMismatch = "public-issuer-mismatch"
	idControllers    = "controllers-not-running"
	idTakeover       = "controller-restarted"
	idNodesUninit    = "nodes-uninitialized"
	idLegacyTokens   = "legacy-tokens-in-use"
	idStaleTokens    = "stale-tokens-in-use"
	idUnreachable    = "member-unreachable"
	idCheckSkipped   = "check-skipped"
)

func checkMembers(s *Snapshot) []finding.Finding {
	var out []finding.Finding
	minted := slices.ContainsFunc(s.Members, func(m Member) bool { return m.Reachable && m.SigningKID != "" })
	for _, m := range s.Members {
		if m.Reachable && m.MintErr != "" && minted && !containsForbidden(m.MintErr) {
			// It answers, but cannot serve a write the others serve: typically its etcd is gone.
			out = append(out, finding.New(idUnreachable, fmt.Sprintf(
				"member %s answers but could not mint a token the other members mint: %s; requests the load balancer sends there may fail or hang (is its etcd member gone?)",
				m.Name, m.MintErr), finding.Evidence{Member: m.Name, Key: "TokenRequest", Value: m.MintErr}).On(m.Name, m.URL).WithSeverity(catalogue.Warning))
			continue
		}
		if m.Reachable {
			continue
		}
		if m.rejectsUs {
			out = append(out, finding.New(idUnreachable, fmt.Sprintf(
				"member %s (%s) rejects credwatch's own token (HTTP 401): it does not trust the key or issuer the other members sign with, or credwatch's token is no longer valid; the probe tokens are presented to it directly, its own row in the matrix is unknown",
				m.Name, m.URL), finding.Evidence{Member: m.Name, Key: "url", Value: m.URL},
				finding.Evidence{Member: m.Name, Key: "error", Value: m.Error}).On(m.Name, m.URL))
			continue
		}
		out = append(out, finding.New(idUnreachable,
			fmt.Sprintf("member %s (%s) could not be asked directly: %s; clients the load balancer sends there may fail, and its row in the matrix is unknown", m.Name, m.URL, m.Error),
			finding.Evidence{Member: m.Name, Key: "url", Value: m.URL},
			finding.Evidence{Member: m.Name, Key: "error", Value: m.Error}).On(m.Name, m.URL))
	}
	return out
}

// majority returns the value most reachable members have (ties: the smallest value) and how many
// distinct values there are.
func majority(s *Snapshot, key func(Member) string) (string, int) {
	var vals []string
	for _, m := range s.Members {
		if m.Reachable {
			vals = append(vals, key(m))
		}
	}
	return mostCommon(vals)
}

// mostCommon returns the most frequent non-empty value (ties: the smallest) and the number of
// distinct non-empty values.
func mostCommon(vals []string) (string, int) {
	count := map[string]int{}
	for _, v := range vals {
		if v != "" {
			count[v]++
		}
	}
	best, n := "", 0
	for _, k := range slices.Sorted(maps.Keys(count)) {
		if count[k] > n {
			best, n = k, count[k]
		}
	}
	return best, len(count)
}

// cell returns the review of the token minted through via, by member.
func (s *Snapshot) cell(via, member string) (Cell, bool) {
	if s.Matrix == nil {
		return Cell{}, false
	}
	for _, r := range s.Matrix.Rows {
		if r.Via != via {
			continue
		}
		for _, c := range r.Cells {
			if c.Member == member {
				return c, true
			}
		}
	}
	return Cell{}, false
}

// row returns the matrix row for a token name.
func (s *Snapshot) row(token string) *Row {
	if s.Matrix == nil {
		return nil
	}
	for i := range s.Matrix.Rows {
		if s.Matrix.Rows[i].Token == token {
			return &s.Matrix.Rows[i]
		}
	}
	return nil
}

// rejections lists the cells with the given cause: tokens minted through via rejected by others
// (byVia) or tokens of others rejected by member (byMember).
func rejections(s *Snapshot, cause, via, member string) []finding.Evidence {
	var ev []finding.Evidence
	if s.Matrix == nil {
		return nil
	}
	for _, r := range s.Matrix.Rows {
		for _, c := range r.Cells {
			if c.Cause != cause || r.Via == c.Member {
				continue
			}
			if (via != "" && r.Via == via) || (member != "" && c.Member == member) {
				ev = append(ev, finding.Evidence{Member: c.Member, Object: r.Token, Key: cause, Value: c.Message})
			}
		}
	}
	return ev
}

func jwksHas(m Member, kid string) (has, known bool) {
	if m.JWKS == nil {
		return false, false
	}
	return slices.ContainsFunc(m.JWKS, func(k JWK) bool { return k.KID == kid }), true
}

func checkKeyDrift(s *Snapshot) []finding.Finding {
	major, distinct := majority(s, func(m Member) string { return m.SigningKID })
	var out []finding.Finding
	for _, m := range s.Members {
		if !m.Reachable {
			continue
		}
		theirs := rejections(s, causeKey, m.Name, "") // m's tokens rejected by others
		var mine []finding.Evidence                   // tokens signed with the majority key rejected by m
		for _, e := range rejections(s, causeKey, "", m.Name) {
			if r := s.row(e.Object); r != nil && r.KID == major {
				mine = append(mine, e)
			}
		}
		var why []string
		ev := []finding.Evidence{{Member: m.Name, Key: "signing kid", Value: m.SigningKID}}
		if m.SigningKID != "" && m.SigningKID != major {
			ev = append(ev, finding.Evidence{Key: "kid most members sign with", Value: major})
			var rejecters []string
			for _, o := range s.Members {
				if has, known := jwksHas(o, m.SigningKID); o.Name != m.Name && o.Reachable && known && !has {
					rejecters = append(rejecters, o.Name)
				}
			}
			for _, e := range theirs {
				if !slices.Contains(rejecters, e.Member) {
					rejecters = append(rejecters, e.Member)
				}
			}
			if len(rejecters) > 0 {
				sort.Strings(rejecters)
				why = append(why, fmt.Sprintf("signs with key %s, which %s do not have (its tokens get \"signing-key-unknown\" there)",
					shortKID(m.SigningKID), strings.Join(rejecters, ", ")))
			}
		}
		if has, known := jwksHas(m, major); major != "" && known && !has || len(mine) > 0 {
			why = append(why, fmt.Sprintf("does not accept key %s, which most members sign with (their tokens get \"signing-key-unknown\" here)", shortKID(major)))
		}
		if len(why) == 0 {
			continue
		}
		ev = append(ev, theirs...)
		ev = append(ev, mine...)
		ev = append(ev, finding.Evidence{Member: m.Name, Key: "jwks kids", Value: kidList(m.JWKS)})
		msg := fmt.Sprintf("member %s %s: clients get intermittent 401s depending on which member the load balancer picks", m.Name, strings.Join(why, "; and "))
		f := finding.New(idKeyDrift, msg, ev...).On(m.Name, m.URL)
		if distinct > 1 && m.SigningKID == major {
			// A split without a clear odd one out: still name it, but as a warning.
			f = f.WithSeverity(catalogue.Warning)
		}
		out = append(out, f)
	}
	return out
}

func kidList(keys []JWK) string {
	if keys == nil {
		return "unknown"
	}
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = shortKID(k.KID)
	}
	return strings.Join(ids, ",")
}

// signingIssuer is the issuer a member puts into tokens.
func signingIssuer(m Member) string {
	if m.SigningIss != "" {
		return m.SigningIss
	}
	if m.Discovery != nil {
		return m.Discovery.Issuer
	}
	if len(m.Issuers) > 0 {
		return m.Issuers[0]
	}
	return ""
}

// accepts says whether member m accepts issuer iss: from its flags when visible, else from the
// matrix (a token with that issuer accepted or rejected with issuer-not-accepted).
func accepts(s *Snapshot, m Member, iss string) (yes, known bool) {
	if len(m.Issuers) > 0 {
		return slices.Contains(m.Issuers, iss), true
	}
	if signingIssuer(m) == iss {
		return true, true
	}
	for _, o := range s.Members {
		if signingIssuer(o) != iss || o.Name == m.Name {
			continue
		}
		if c, ok := s.cell(o.Name, m.Name); ok {
			switch {
			case c.Accepted:
				return true, true
			case c.Cause == causeIssuer:
				return false, true
			}
		}
	}
	return false, false
}

func checkIssuerDrift(s *Snapshot) []finding.Finding {
	major, _ := majority(s, signingIssuer)
	var out []finding.Finding
	for _, m := range s.Members {
		if !m.Reachable || major == "" {
			continue
		}
		ev := []finding.Evidence{{Member: m.Name, Key: "signing issuer", Value: signingIssuer(m)},
			{Key: "issuer most members sign with", Value: major}}
		if len(m.Issuers) > 0 {
			ev = append(ev, finding.Evidence{Member: m.Name, Key: "--service-account-issuer", Value: strings.Join(m.Issuers, ",")})
		}
		if ok, known := accepts(s, m, major); known && !ok {
			ev = append(ev, rejections(s, causeIssuer, "", m.Name)...)
			out = append(out, finding.New(idIssuerDrift, fmt.Sprintf(
				"member %s does not accept issuer %s, which most members sign with: clients holding such tokens get a bare \"invalid bearer token\" from %s; keep %s as a second --service-account-issuer there%s",
				m.Name, major, m.Name, major, alike(major, append([]string{signingIssuer(m)}, m.Issuers...)...)), ev...).On(m.Name, m.URL))
			continue
		}
		own := signingIssuer(m)
		if own == "" || own == major {
			continue
		}
		var rejecters []string
		for _, o := range s.Members {
			if ok, known := accepts(s, o, own); o.Reachable && o.Name != m.Name && known && !ok {
				rejecters = append(rejecters, o.Name)
			}
		}
		if len(rejecters) == 0 {
			continue
		}
		ev = append(ev, rejections(s, causeIssuer, m.Name, "")...)
		// The old issuer is kept: an issuer migration in progress. Its own new tokens are still
		// rejected by the members that do not list the new issuer yet.
		out = append(out, finding.New(idIssuerDrift, fmt.Sprintf(
			"member %s signs with issuer %s and still accepts %s (migration in progress); %s do not accept %s yet, so tokens minted through %s are rejected there until every member lists it%s",
			m.Name, own, major, strings.Join(rejecters, ", "), own, m.Name, alike(own, major)), ev...).On(m.Name, m.URL).WithSeverity(catalogue.Info))
	}
	return out
}

// alike is " (A and B differ at byte N (U+0430 vs 'a'))" when a and one of bs differ but look
// alike (a homoglyph, an invisible character), else "": a verdict that compares them must not
// print two identical-looking strings as its reason.
func alike(a string, bs ...string) string {
	if d := redact.LookalikeIn(a, bs...); d != "" {
		return " (" + d + ")"
	}
	return ""
}

// apiAudiences is what a member accepts when a token is used against its API.
func apiAudiences(m Member) []string {
	if len(m.APIAudiences) > 0 {
		return m.APIAudiences
	}
	if a := m.Flags["api-audiences"]; len(a) > 0 {
		return a
	}
	return m.Issuers
}

func checkAudienceDrift(s *Snapshot) []finding.Finding {
	key := func(m Member) string {
		a := slices.Clone(apiAudiences(m))
		sort.Strings(a)
		return strings.Join(a, ",")
	}
	major, distinct := majority(s, key)
	if distinct < 2 {
		return nil
	}
	majorSet := strings.Split(major, ",")
	var out []finding.Finding
	for _, m := range s.Members {
		k := key(m)
		if !m.Reachable || k == "" || k == major {
			continue
		}
		mine := apiAudiences(m)
		ev := []finding.Evidence{{Member: m.Name, Key: "API audiences", Value: strings.Join(mine, ",")},
			{Key: "API audiences of most members", Value: major}}
		overlap := slices.ContainsFunc(mine, func(a string) bool { return slices.Contains(majorSet, a) })
		if overlap {
			out = append(out, finding.New(idAudienceDrift, fmt.Sprintf(
				"member %s accepts API audiences %s, most members %s; they overlap, so API tokens work everywhere, but tokens minted for an audience only some members list are rejected by the others",
				m.Name, strings.Join(mine, ","), major), ev...).On(m.Name, m.URL).WithSeverity(catalogue.Info))
			continue
		}
		out = append(out, finding.New(idAudienceDrift, fmt.Sprintf(
			"member %s accepts API audiences %s, which share nothing with %s of the other members: tokens minted through the others are rejected by %s with \"token audiences ... is invalid for the target audiences ...\", and tokens minted through %s by them",
			m.Name, strings.Join(mine, ","), major, m.Name, m.Name), ev...).On(m.Name, m.URL))
	}
	return out
}
