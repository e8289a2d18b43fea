// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package redact

import (
	"strings"
	"sync"
)

// Known is a process's set of secrets known in advance (the kubeconfig's bearer token and
// password, a token file's token), which a Writer takes out of everything it writes in any
// spelling (Secret). Its zero value is empty and ready; it is safe for concurrent use, and a nil
// *Known holds nothing.
type Known struct {
	mu      sync.RWMutex
	secrets []string
}

// Add adds secrets to the set; empty ones and ones it holds already are left out.
func (k *Known) Add(secrets ...string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, s := range secrets {
		if s != "" && !contains(k.secrets, s) {
			k.secrets = append(k.secrets, s)
		}
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// Redact applies Secret for each known secret to each line of s: a secret too short to cut out
// withholds its line, not the whole text.
func (k *Known) Redact(s string) string {
	if k == nil {
		return s
	}
	k.mu.RLock()
	secrets := k.secrets
	k.mu.RUnlock()
	for _, sec := range secrets {
		s = redactLines(s, sec)
	}
	return s
}

// redactLines is Secret(line, secret) for each line of s; a text that cannot spell secret (it
// neither contains it nor any escape) is returned at once.
func redactLines(s, secret string) string {
	if !strings.Contains(s, secret) && !strings.ContainsAny(s, `%&\+`) {
		return s
	}
	var b strings.Builder
	changed := false
	for rest := s; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		body := strings.TrimSuffix(line, "\n")
		r := Secret(body, secret)
		if r != body && !changed {
			changed = true
			b.WriteString(s[:len(s)-len(rest)-len(line)])
		}
		if changed {
			b.WriteString(r)
			b.WriteString(line[len(body):])
		}
	}
	if !changed {
		return s
	}
	return b.String()
}
