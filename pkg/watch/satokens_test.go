// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/credwatch/credwatch/pkg/logs/audit"
)

// use is one token use of a test: member m's log names account ns/name with kind k.
type use struct{ m, k, ns, name string }

func TestSAAccounts(t *testing.T) {
	t.Parallel()
	stale := func(m, ns, name string) use { return use{m, audit.TokenStale, ns, name} }
	legacy := func(m, ns, name string) use { return use{m, audit.TokenLegacy, ns, name} }
	count := func(m, k, ns, name string, n int64) SATokens {
		return SATokens{Member: m, Kind: k, Namespace: ns, ServiceAccount: name, Requests: n}
	}
	for _, tt := range []struct {
		name  string
		limit int
		uses  []use
		want  []SATokens
	}{
		{"under the bound", 2, []use{stale("a", "ns", "x"), stale("a", "ns", "x"), stale("a", "ns", "y")},
			[]SATokens{count("a", "stale", "ns", "x", 2), count("a", "stale", "ns", "y", 1)}},
		{"past the bound: first seen keep their series", 1, []use{stale("a", "ns", "y"), stale("a", "ns", "x"), stale("a", "ns", "x"), stale("a", "ns", "y")},
			[]SATokens{count("a", "stale", "", "other", 2), count("a", "stale", "ns", "y", 2)}},
		{"bound per kind", 1, []use{stale("a", "ns", "x"), legacy("a", "ns", "y"), legacy("a", "ns", "x")},
			[]SATokens{count("a", "legacy", "", "other", 1), count("a", "legacy", "ns", "y", 1), count("a", "stale", "ns", "x", 1)}},
		{"bound across members", 1, []use{stale("a", "ns", "x"), stale("b", "ns", "y"), stale("b", "ns", "x")},
			[]SATokens{count("a", "stale", "ns", "x", 1), count("b", "stale", "", "other", 1), count("b", "stale", "ns", "x", 1)}},
		{"no account named", 0, []use{stale("a", "ns", "x"), legacy("a", "ns", "y")},
			[]SATokens{count("a", "legacy", "", "other", 1), count("a", "stale", "", "other", 1)}},
		{"same name, other namespace", 1, []use{stale("a", "ns1", "x"), stale("a", "ns2", "x")},
			[]SATokens{count("a", "stale", "", "other", 1), count("a", "stale", "ns1", "x", 1)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := newSAAccounts(tt.limit)
			for _, u := range tt.uses {
				a.add(u.m, audit.TokenUse{Kind: u.k, Namespace: u.ns, Name: u.name})
			}
			if got := a.list(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestSAAccountsMonotonic: however many accounts come and go, a series once listed stays listed
// and its count never goes down, and the series stay within members × kinds × (bound+1).
func TestSAAccountsMonotonic(t *testing.T) {
	t.Parallel()
	const limit = 3
	a := newSAAccounts(limit)
	last := map[saKey]int64{}
	kinds := []string{audit.TokenStale, audit.TokenLegacy}
	for i := range 2000 {
		// The busiest accounts show up late: a top-N by count would move them in and others out.
		name := fmt.Sprintf("sa-%d", (i*7919)%(50+i/10))
		a.add(fmt.Sprintf("apiserver-%d", i%3), audit.TokenUse{Kind: kinds[i%2], Namespace: "ns", Name: name})
		if i%97 != 0 {
			continue
		}
		got := map[saKey]int64{}
		for _, c := range a.list() {
			got[saKey{c.Member, c.Kind, c.Namespace, c.ServiceAccount}] = c.Requests
		}
		for k, n := range last {
			if got[k] < n {
				t.Fatalf("after %d uses: %+v went from %d to %d", i+1, k, n, got[k])
			}
		}
		if len(got) > 3*len(kinds)*(limit+1) {
			t.Fatalf("after %d uses: %d series, want at most %d", i+1, len(got), 3*len(kinds)*(limit+1))
		}
		last = got
	}
}
