// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cause

import (
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

func TestSplitAggregate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   []string
		closed bool
	}{
		{"invalid bearer token", []string{"invalid bearer token"}, true},
		{"[a, b]", []string{"a", "b"}, true},
		{"[a, [b, c]]", []string{"a", "b", "c"}, true},
		{"[a, b", []string{"a", "b"}, false},
		{`[a, x ["p" "q"] y]`, []string{"a", `x ["p" "q"] y`}, true},
		{"", nil, true},
	}
	for _, tt := range tests {
		got, closed := splitAggregate(tt.in)
		if len(got) != len(tt.want) || closed != tt.closed {
			t.Errorf("%q: got %q closed=%v, want %q closed=%v", tt.in, got, closed, tt.want, tt.closed)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
			}
		}
	}
}

func TestPrimaryPartIsNotLoopback(t *testing.T) {
	t.Parallel()
	cl := NewClassifier(catalogue.Default())
	c := cl.classifyAggregate("[invalid bearer token, invalid signature, no keys found]", false)
	if len(c.parts) != 2 || !c.parts[0].Loopback || c.parts[1].Cause != "signing-key-unknown" || c.primary != 1 {
		t.Fatalf("got %+v", c)
	}
}

func FuzzAggregate(f *testing.F) {
	f.Add("[invalid bearer token, invalid signature, no keys found]")
	f.Add("[invalid bearer token, [invalid bearer token, square/go-jose: error in cryptographic primitive]]")
	f.Add(`[invalid bearer token, token audiences ["a"] is invalid for the target audiences ["b"]]`)
	cl := NewClassifier(catalogue.Default())
	f.Fuzz(func(t *testing.T, s string) {
		c := cl.classifyAggregate(s, len(s)%2 == 0)
		if c.primary >= len(c.parts) {
			t.Fatalf("primary %d of %d parts", c.primary, len(c.parts))
		}
		if len(c.parts) > 0 && c.primary < 0 && !allLoopback(c.parts) {
			t.Fatalf("no primary part in %+v", c.parts)
		}
	})
}

func allLoopback(ps []Part) bool {
	for _, p := range ps {
		if !p.Loopback {
			return false
		}
	}
	return true
}

// BenchmarkClassifyUncached classifies typical authentication errors without the aggregate cache.
func BenchmarkClassifyUncached(b *testing.B) {
	lines := []Line{
		{Msg: "Unable to authenticate the request", Err: "[invalid bearer token, square/go-jose: error in cryptographic primitive]"},
		{Msg: "Unable to authenticate the request", Err: "[invalid bearer token, invalid signature, no keys found]"},
		{Msg: "Unable to authenticate the request due to an error: [invalid bearer token, context deadline exceeded]"},
		{Msg: `failed to update lease, error: Put "https://lb:6443/x?timeout=10s": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`},
	}
	cl := NewClassifier(catalogue.Default())
	for b.Loop() {
		clear(cl.cache)
		for _, l := range lines {
			cl.Classify(l)
		}
	}
}
