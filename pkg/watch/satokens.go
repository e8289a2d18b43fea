// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"cmp"
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/logs/audit"
)

// SATokens counts the requests a member's audit log (--audit-log) recorded with a service
// account's token of one kind (audit.TokenStale, TokenLegacy) since watch began:
// the counter credwatch_serviceaccount_tokens_total. Past the bound (Config.AuditServiceAccounts)
// an account is counted under Namespace "" and ServiceAccount OtherServiceAccount.
type SATokens struct {
	Member         string `json:"member"`
	Namespace      string `json:"namespace"`
	ServiceAccount string `json:"serviceAccount"`
	Kind           string `json:"kind"`
	Requests       int64  `json:"requests"`
}

// OtherServiceAccount is the ServiceAccount of the count of every account past the bound.
const OtherServiceAccount = "other"

// DefaultAuditServiceAccounts is Config.AuditServiceAccounts' default.
const DefaultAuditServiceAccounts = 20

// saKey is one series of credwatch_serviceaccount_tokens_total.
type saKey struct{ member, kind, namespace, name string }

// saAccounts counts token uses per member, kind and account, naming at most limit accounts per
// kind: the first limit accounts seen with a kind, on any member, keep their own series for as
// long as watch runs; later ones are counted under "other". A series is never dropped or
// renamed, so every counter only grows (a top-N by count would move an account between its own
// series and "other", and both would go back). It holds at most members × kinds × (limit+1)
// counts, whatever the logs say.
type saAccounts struct {
	limit  int
	named  map[string]map[string]bool // by kind: the accounts ("ns/name") that have a series
	counts map[saKey]int64
}

func newSAAccounts(limit int) *saAccounts {
	return &saAccounts{limit: limit, named: map[string]map[string]bool{}, counts: map[saKey]int64{}}
}

// add counts one request member's audit log recorded with the token use u.
func (a *saAccounts) add(member string, u audit.TokenUse) {
	named := a.named[u.Kind]
	if named == nil {
		named = map[string]bool{}
		a.named[u.Kind] = named
	}
	k := saKey{member: member, kind: u.Kind, namespace: u.Namespace, name: u.Name}
	if acct := u.Namespace + "/" + u.Name; !named[acct] {
		if len(named) < a.limit {
			named[acct] = true
		} else {
			k.namespace, k.name = "", OtherServiceAccount
		}
	}
	a.counts[k]++
}

// list returns the counts, sorted by member, kind, namespace and account.
func (a *saAccounts) list() []SATokens {
	out := make([]SATokens, 0, len(a.counts))
	for k, n := range a.counts {
		out = append(out, SATokens{Member: k.member, Namespace: k.namespace, ServiceAccount: k.name, Kind: k.kind, Requests: n})
	}
	slices.SortFunc(out, func(x, y SATokens) int {
		return cmp.Or(strings.Compare(x.Member, y.Member), strings.Compare(x.Kind, y.Kind),
			strings.Compare(x.Namespace, y.Namespace), strings.Compare(x.ServiceAccount, y.ServiceAccount))
	})
	return out
}
