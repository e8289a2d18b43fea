// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/check"
)

// heldPrefix names held tokens among the tokens handed to check ("held:apiserver-1").
const heldPrefix = "held:"

// heldToken is a token minted through a member and kept, as a pod keeps its projected token.
type heldToken struct {
	token  string
	minted time.Time
}

// heldTokens keeps one token per member: the first one minted through it, renewed after
// refresh (80 % of the lifetime, when the kubelet renews), dropped when it is that old and its
// member is gone (pods would have refreshed through another member by then).
type heldTokens struct {
	refresh time.Duration

	mu     sync.Mutex
	latest map[string]string // member -> the token minted through it this interval
	byVia  map[string]heldToken
}

func newHeldTokens(lifetime time.Duration) *heldTokens {
	return &heldTokens{refresh: lifetime * 8 / 10, latest: map[string]string{}, byVia: map[string]heldToken{}}
}

// minted records a fresh probe token (one of check.Snapshot.Minted).
func (h *heldTokens) minted(member, token string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.latest[member] = token
}

// rename moves the token held from a member to its new name: a member first named by its
// address is named by its static pod once that is listed, and must not hold a second token.
func (h *heldTokens) rename(from, to string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur, ok := h.byVia[from]; ok {
		if _, taken := h.byVia[to]; !taken {
			h.byVia[to] = cur
		}
		delete(h.byVia, from)
	}
}

// settle runs after an interval: members seen for the first time, and held tokens due for
// renewal, take the token minted this interval.
func (h *heldTokens) settle(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for via, tok := range h.latest {
		if cur, ok := h.byVia[via]; !ok || now.Sub(cur.minted) >= h.refresh {
			h.byVia[via] = heldToken{token: tok, minted: now}
		}
	}
	for via, cur := range h.byVia {
		if _, seen := h.latest[via]; !seen && now.Sub(cur.minted) >= h.refresh {
			delete(h.byVia, via)
		}
	}
	clear(h.latest)
}

// tokens returns the held tokens to review next interval, in member order.
func (h *heldTokens) tokens() []check.NamedToken {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]check.NamedToken, 0, len(h.byVia))
	for _, via := range sortedKeys(h.byVia) {
		out = append(out, check.NamedToken{Name: heldPrefix + via, Token: h.byVia[via].token})
	}
	return out
}
