// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/logs"
)

// TestWatchEventsOf: the in-cluster watcher's JSON event lines become events, its other lines
// are skipped, and each event is timed from the etcd removal.
func TestWatchEventsOf(t *testing.T) {
	at := time.Date(2026, 12, 7, 10, 27, 0, 0, time.UTC)
	lines := []capilab.LogLine{
		{At: at, Text: `{"time":"2026-12-07T10:27:10Z","interval":3,"kind":"finding-raised","member":"","severity":"warning","id":"own-requests-refused","message":"credwatch's own requests failed: leases timed out"}`},
		{At: at, Text: `credwatch watch: listening on :9090`},
		{At: at, Text: `{"not":"an event"}`},
		{At: at, Text: `{"time":"2026-12-07T10:27:20Z","interval":5,"kind":"member-down","member":"kube-apiserver-old","severity":"warning","id":"member-unreachable","message":"member kube-apiserver-old does not answer"}`},
	}
	evs := watchEventsOf(lines)
	fromRemoval(evs, at.Add(15*time.Second))
	if len(evs) != 2 || evs[0].ID != "own-requests-refused" || evs[1].Kind != "member-down" || evs[1].Member != "kube-apiserver-old" {
		t.Fatalf("events: %+v", evs)
	}
	if evs[0].FromEtcdRemoval != "-5.0s" || evs[1].FromEtcdRemoval != "+5.0s" {
		t.Errorf("times from the removal: %q, %q", evs[0].FromEtcdRemoval, evs[1].FromEtcdRemoval)
	}
}

// TestRollLogs: credwatch logs' analysis of two members' CRI files gives the verdict and the
// cause lines per member and minute of the roll, none before it.
func TestRollLogs(t *testing.T) {
	from := time.Date(2026, 12, 7, 10, 26, 30, 0, time.UTC)
	line := func(at time.Time, text string) string {
		return at.Format(time.RFC3339Nano) + " stderr F " + text + "\n"
	}
	invalidated := `E1207 10:27:40.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has been invalidated]"`
	old := line(from.Add(-5*time.Minute), invalidated) + line(from.Add(70*time.Second), invalidated) + line(from.Add(75*time.Second), invalidated)
	input := func(host, text string) logs.Input {
		return logs.Input{Name: host + ".log", Host: host, HostGiven: true, Component: "kube-apiserver",
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil }}
	}
	rl := rollLogs(context.Background(), "the hosts' files", []logs.Input{input("old", old), input("new", "")}, from, from.Add(5*time.Minute))
	if rl.Error != "" || len(rl.Verdict) == 0 || !strings.HasPrefix(rl.Verdict[0], "bound-object-invalidated ×2 on old") {
		t.Fatalf("verdict: %+v", rl)
	}
	if len(rl.PerMinute) != 1 || rl.PerMinute[0] != (capilab.MemberMinute{Minute: 1, Member: "old", Kind: "bound-object-invalidated", Lines: 2}) {
		t.Errorf("per minute: %+v", rl.PerMinute)
	}
	if strings.Join(rl.Members, ",") != "new,old" {
		t.Errorf("members: %v", rl.Members)
	}
}
