// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package tally

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

type errTest string

func (e errTest) Error() string { return string(e) }

func TestTally(t *testing.T) {
	var ta Tally
	ta.Reset(time.Unix(0, 0))
	now := time.Unix(100, 0)
	ta.Minted("apiserver-1", nil)
	ta.Minted("apiserver-4", nil)
	ta.Minted("", errTest("boom"))
	ta.Request(now, "p-0", "apiserver-1", "apiserver-1", http.StatusCreated, time.Second, "")
	ta.Request(now, "p-0", "apiserver-4", "apiserver-1", http.StatusUnauthorized, 2*time.Second, "Unauthorized")
	ta.Request(now, "p-1", "apiserver-10", "apiserver-4", http.StatusUnauthorized, time.Second, "")
	ta.Request(now, "p-1", "", "apiserver-4", 0, time.Second, "")
	s := ta.Snapshot()
	if s.Requests != 4 || s.Unauthorized != 2 || s.NoResponse != 1 || s.TokensIssued != 2 || s.TokenErrors != 1 || s.LastError != "boom" {
		t.Fatalf("totals = %+v", s)
	}
	var names []string
	for _, m := range s.Members {
		names = append(names, m.Member)
	}
	if got, want := strings.Join(names, ","), "apiserver-1,apiserver-4,apiserver-10,"+NoResponse; got != want {
		t.Errorf("member order = %s, want %s", got, want)
	}
	if m := s.Member("apiserver-4"); m.Unauthorized != 1 || m.TokensMinted != 1 || m.Statuses[401] != 1 {
		t.Errorf("apiserver-4 = %+v", m)
	}
	if m := s.Member("apiserver-9"); m.Requests != 0 {
		t.Errorf("absent member = %+v", m)
	}
	if len(s.Reasons) != 1 || s.Reasons[0] != "Unauthorized" {
		t.Errorf("reasons = %v", s.Reasons)
	}
	ta.PodOn("p-1", "node-1")
	if p := ta.Snapshot().Pod("p-1"); p.Node != "node-1" || p.Requests != 2 {
		t.Errorf("p-1 = %+v", p)
	}
	if len(s.Samples) != 2 || s.Samples[0].ServedBy != "apiserver-4" || s.Samples[0].TokenAge != "2s" {
		t.Errorf("samples = %+v", s.Samples)
	}
	if got := s.UnauthorizedRate(); got != 0.5 {
		t.Errorf("rate = %v", got)
	}
	// The snapshot is a copy.
	s.Members[0].Statuses[201] = 99
	if ta.Snapshot().Members[0].Statuses[201] != 1 {
		t.Error("snapshot shares its status map with the tally")
	}

	m := Merge(s, ta.Snapshot())
	if m.Requests != 8 || m.Unauthorized != 4 || m.Member("apiserver-4").Unauthorized != 2 || len(m.Pairs) != 4 || m.TokensIssued != 4 {
		t.Errorf("merge = %+v", m)
	}
}

// TestZeroValue: a Tally needs no Reset before it counts.
func TestZeroValue(t *testing.T) {
	var ta Tally
	ta.Request(time.Unix(1, 0), "p", "", "", 0, 0, "")
	ta.Minted("", errTest("no token file"))
	if s := ta.Snapshot(); s.Requests != 1 || s.NoResponse != 1 || s.Member(NoResponse).Statuses[0] != 1 || s.TokenErrors != 1 {
		t.Errorf("zero value: %+v", s)
	}
}
