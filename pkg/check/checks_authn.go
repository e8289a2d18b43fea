// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
)

// Finding IDs of the structured-authentication check.
const (
	idAuthnConfigDiffers = "authn-config-differs"
	idAuthnReloadFailed  = "authn-config-reload-failed"
	idJWTNoKeys          = "jwt-authenticator-no-keys"
	idJWKSDiffers        = "jwt-jwks-differs"
)

// checkAuthn judges the members' structured authentication configuration (KEP-3331) from their
// /metrics: whether they run the same configuration, whether each loaded the last edit of its
// file, and whether each JWT authenticator holds its issuer's keys, the same as the others'.
// Members whose /metrics show no AuthenticationConfiguration raise nothing unless another
// member runs one.
func checkAuthn(s *Snapshot) []finding.Finding {
	var scraped, configured []Member
	for _, m := range s.Members {
		if !m.Reachable || m.Metrics == nil {
			continue
		}
		scraped = append(scraped, m)
		if a := m.Metrics.Authn; a != nil && a.ConfigHash != "" {
			configured = append(configured, m)
		}
	}
	if len(configured) == 0 {
		return nil
	}
	out := authnConfigDiffers(scraped)
	for _, m := range configured {
		if f, ok := authnReloadFailed(m); ok {
			out = append(out, f)
		}
	}
	for _, m := range scraped {
		out = append(out, jwtNoKeys(m)...)
	}
	return append(out, jwksDiffers(scraped)...)
}

// noConfig stands for the configuration of a member that runs none.
const noConfig = "none"

// configHash is the member's configuration hash (noConfig when it runs none).
func configHash(m Member) string {
	if a := m.Metrics.Authn; a != nil && a.ConfigHash != "" {
		return a.ConfigHash
	}
	return noConfig
}

// authnConfigDiffers names each member that runs another AuthenticationConfiguration than most
// members (or none beside members that run one); an even split names every member.
func authnConfigDiffers(scraped []Member) []finding.Finding {
	var hashes []string
	count := map[string]int{}
	for _, m := range scraped {
		hashes = append(hashes, configHash(m))
		count[configHash(m)]++
	}
	major, distinct := mostCommon(hashes)
	if distinct < 2 {
		return nil
	}
	even := false
	for h, n := range count {
		even = even || h != major && n == count[major]
	}
	var out []finding.Finding
	for _, m := range scraped {
		mine := configHash(m)
		if mine == major && !even {
			continue
		}
		ev := []finding.Evidence{{Member: m.Name, Key: metricAuthnConfigInfo + " hash", Value: shortHash(mine)}}
		if !even {
			ev = append(ev, finding.Evidence{Key: "hash most members run", Value: shortHash(major)})
		}
		what := "runs AuthenticationConfiguration " + shortHash(mine)
		if mine == noConfig {
			what = "runs no AuthenticationConfiguration (no --authentication-config)"
		}
		msg := fmt.Sprintf("member %s %s; most members run %s", m.Name, what, shortHash(major))
		if even {
			msg = fmt.Sprintf("member %s %s; the members split evenly between configurations", m.Name, what)
		}
		msg += ": an ID token one member accepts can be refused by another (\"oidc: ...\" in its log); give every member the same file"
		out = append(out, finding.New(idAuthnConfigDiffers, msg, ev...).On(m.Name, m.URL))
	}
	return out
}

// authnReloadFailed raises authn-config-reload-failed for a member whose last automatic reload
// failed (no success since): it runs the configuration it loaded before, not its file.
func authnReloadFailed(m Member) (finding.Finding, bool) {
	a := m.Metrics.Authn
	failed, ok := a.LastReload["failure"]
	if !ok || failed <= a.LastReload["success"] {
		return finding.Finding{}, false
	}
	return finding.New(idAuthnReloadFailed, fmt.Sprintf(
		"member %s failed to reload its AuthenticationConfiguration at %s (reloads failed: %g, succeeded: %g): it keeps running configuration %s, not what its --authentication-config file says; its log says why (\"failed to load authentication config\", \"failed to validate authentication config\" or \"failed to update authentication config\")",
		m.Name, unixUTC(failed), a.Reloads["failure"], a.Reloads["success"], shortHash(a.ConfigHash)),
		finding.Evidence{Member: m.Name, Key: metricAuthnReloadLast + `{status="failure"}`, Value: unixUTC(failed)},
		finding.Evidence{Member: m.Name, Key: metricAuthnReloads, Value: fmt.Sprintf("failure %g, success %g", a.Reloads["failure"], a.Reloads["success"])},
		finding.Evidence{Member: m.Name, Key: metricAuthnConfigInfo + " hash", Value: shortHash(a.ConfigHash)},
	).On(m.Name, m.URL), true
}

// jwtNoKeys raises jwt-authenticator-no-keys for each JWT authenticator of the member whose last
// JWKS fetch failed: at error when it never fetched a key set (every token of that issuer is
// refused), at warning when it keeps an older set (a token with a new kid is refused).
func jwtNoKeys(m Member) []finding.Finding {
	a := m.Metrics.Authn
	if a == nil {
		return nil
	}
	var out []finding.Finding
	for _, h := range slices.Sorted(maps.Keys(a.Issuers)) {
		j := a.Issuers[h]
		if j.LastFailure == 0 || j.LastFailure <= j.LastSuccess {
			continue
		}
		ev := []finding.Evidence{{Member: m.Name, Key: metricJWKSFetchLast + `{result="failure"}`, Value: unixUTC(j.LastFailure)},
			{Member: m.Name, Key: "jwt_issuer_hash", Value: shortHash(h)}}
		if j.KeySetHash == "" || j.LastSuccess == 0 {
			out = append(out, finding.New(idJWTNoKeys, fmt.Sprintf(
				"member %s's JWT authenticator for issuer %s has no keys: it fetched discovery but its JWKS fetch failed (last at %s) and none ever succeeded, so it refuses every ID token of that issuer (\"oidc: verify token: ...\") although /readyz passes",
				m.Name, shortHash(h), unixUTC(j.LastFailure)), ev...).On(m.Name, m.URL).WithSeverity(catalogue.Error))
			continue
		}
		ev = append(ev, finding.Evidence{Member: m.Name, Key: metricJWKSKeySet + " hash", Value: shortHash(j.KeySetHash)})
		out = append(out, finding.New(idJWTNoKeys, fmt.Sprintf(
			"member %s's JWT authenticator for issuer %s last failed to fetch its JWKS (at %s, after a success at %s): it verifies with the key set it fetched before, so a token signed with a key the issuer rotated to is refused there",
			m.Name, shortHash(h), unixUTC(j.LastFailure), unixUTC(j.LastSuccess)), ev...).On(m.Name, m.URL))
	}
	return out
}

// jwksDiffers names, per JWT issuer, each member whose last fetched key set differs from most
// members' (members that never fetched one are left out: they fetch at their first token).
func jwksDiffers(scraped []Member) []finding.Finding {
	byIssuer := map[string][]Member{}
	for _, m := range scraped {
		if a := m.Metrics.Authn; a != nil {
			for h, j := range a.Issuers {
				if j.KeySetHash != "" {
					byIssuer[h] = append(byIssuer[h], m)
				}
			}
		}
	}
	var out []finding.Finding
	for _, h := range slices.Sorted(maps.Keys(byIssuer)) {
		mems := byIssuer[h]
		var sets []string
		for _, m := range mems {
			sets = append(sets, m.Metrics.Authn.Issuers[h].KeySetHash)
		}
		major, distinct := mostCommon(sets)
		if distinct < 2 {
			continue
		}
		for i, m := range mems {
			if sets[i] == major {
				continue
			}
			out = append(out, finding.New(idJWKSDiffers, fmt.Sprintf(
				"member %s's JWT authenticator for issuer %s holds key set %s; most members hold %s: it fetched the issuer's JWKS at another time (before or after a rotation) and fetches again only for a kid it does not know",
				m.Name, shortHash(h), shortHash(sets[i]), shortHash(major)),
				finding.Evidence{Member: m.Name, Key: metricJWKSKeySet + " hash", Value: shortHash(sets[i])},
				finding.Evidence{Key: "key set most members hold", Value: shortHash(major)},
				finding.Evidence{Member: m.Name, Key: "jwt_issuer_hash", Value: shortHash(h)},
			).On(m.Name, m.URL))
		}
	}
	return out
}

// shortHash is kube-apiserver's "sha256:<hex>" cut to 12 hex digits.
func shortHash(h string) string {
	hex, ok := strings.CutPrefix(h, "sha256:")
	if ok && len(hex) > 12 {
		return "sha256:" + hex[:12]
	}
	return h
}
