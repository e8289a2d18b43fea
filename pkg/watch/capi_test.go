// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/check"
)

// TestWatchCAPIRollBlocked: with Config.ClusterAPI (watch --capi-cluster), every interval reads
// the KubeadmControlPlane again; a roll it stops is a finding raised in the interval that reads
// it, kept through an interval whose read fails (said in the sources), and cleared once the
// condition is gone.
func TestWatchCAPIRollBlocked(t *testing.T) {
	t.Parallel()
	no := false
	view := func(status string) *check.ClusterAPI {
		return &check.ClusterAPI{Cluster: "default/w1", Version: "v1.14.2",
			Machines: []check.Machine{{Name: "w1-cp-a", UpToDate: &no}},
			ControlPlane: &check.ControlPlaneStatus{Name: "default/w1-cp", Replicas: 1, UpToDate: 0,
				Conditions: []check.Condition{{Type: "CertificatesAvailable", Status: status, Reason: "InternalError",
					Message: "Cluster certificate for sa is not available, please check cluster certificate secrets"}}}}
	}
	reads := []func() (*check.ClusterAPI, error){
		func() (*check.ClusterAPI, error) { return view("True"), nil },
		func() (*check.ClusterAPI, error) { return view("False"), nil },
		func() (*check.ClusterAPI, error) { return nil, errors.New("list Machines: connection refused") },
		func() (*check.ClusterAPI, error) { return view("True"), nil },
	}
	n := 0
	read := func(context.Context) (*check.ClusterAPI, error) {
		n++
		return reads[min(n, len(reads))-1]()
	}
	fetch := func(_ context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
		s := fakeSnapshot(cfg, healthy)
		// As check.FetchMembers does: the view read beside the fetch, once the members are asked.
		s.ClusterAPI = cfg.ClusterAPIRead()
		if s.ClusterAPI != nil {
			s.Members[0].Machine = s.ClusterAPI.Machines[0].Name
		}
		return s, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{}
	stop := ObserverFunc(func(*State, []Event) {
		if len(rec.states) >= len(reads) {
			cancel()
		}
	})
	w, err := New(Config{Check: check.Config{Timeout: time.Second}, Interval: 10 * time.Millisecond, MetricsEvery: 1,
		Fetch: fetch, ClusterAPI: read, Observers: []Observer{rec, stop}})
	if err != nil {
		t.Fatal(err)
	}
	w.Run(ctx)
	if len(rec.states) != len(reads) {
		t.Fatalf("%d intervals ran, want %d", len(rec.states), len(reads))
	}
	if _, e := rec.first(kind(MemberJoined, healthy[0].name)); !strings.HasSuffix(e.Message, ", on Machine w1-cp-a") {
		t.Errorf("member-joined says %q, want the Machine it runs on", e.Message)
	}
	if i, e := rec.first(raised("capi-roll-blocked", "")); i != 2 {
		t.Errorf("capi-roll-blocked raised in interval %d (%+v), want 2", i, e)
	}
	if i, e := rec.first(func(e Event) bool { return e.Kind == FindingCleared && e.ID == "capi-roll-blocked" }); i != 4 {
		t.Errorf("capi-roll-blocked cleared in interval %d (%+v), want 4 (kept while the read failed)", i, e)
	}
	if why := rec.states[2].Sources[check.SrcClusterAPI]; why != "list Machines: connection refused" {
		t.Errorf("interval 3 sources say %q of the Cluster API view, want the read's error", why)
	}
	if why, ok := rec.states[3].Sources[check.SrcClusterAPI]; ok {
		t.Errorf("interval 4 read the view and still says %q", why)
	}
}

// TestWatchCAPIReadBesideFetch: the Cluster API view is read beside the members' fetch, which
// waits for it only to relate members to Machines. A management cluster whose reads hang (the
// cluster being rolled manages itself) once left the members' probes an expired context, and
// watch called every member down.
func TestWatchCAPIReadBesideFetch(t *testing.T) {
	healthy := []fakeMember{{name: "apiserver-1", kid: "k1"}}
	fetching := make(chan struct{})
	read := func(ctx context.Context) (*check.ClusterAPI, error) {
		select {
		case <-fetching: // the fetch began while this read was still going
			return &check.ClusterAPI{Cluster: "default/w1", Machines: []check.Machine{{Name: "w1-cp-1", NodeName: "apiserver-1"}}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var related string
	fetch := func(_ context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
		close(fetching)
		s := fakeSnapshot(cfg, healthy)
		if s.ClusterAPI = cfg.ClusterAPIRead(); s.ClusterAPI != nil {
			related = s.ClusterAPI.Machines[0].Name
		}
		return s, nil
	}
	w, err := New(Config{Check: check.Config{Timeout: time.Second}, Interval: time.Second, Duration: time.Millisecond, MetricsEvery: 1,
		Fetch: fetch, ClusterAPI: read})
	if err != nil {
		t.Fatal(err)
	}
	if s := w.Run(context.Background()); s.Intervals != 1 || related != "w1-cp-1" {
		t.Errorf("%d intervals; the fetch related its member to %q, want w1-cp-1 read beside it", s.Intervals, related)
	}
}
