// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/clusterapi"
	"github.com/credwatch/credwatch/pkg/report"
	"github.com/credwatch/credwatch/pkg/watch"
)

// capiWatchInterval is credwatch watch's interval on the workload cluster during a roll.
const capiWatchInterval = 5 * time.Second

// WatchEvent is one event credwatch watch raised on the workload cluster during the scenario.
type WatchEvent struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Member  string    `json:"member,omitempty"`
	ID      string    `json:"id,omitempty"`
	Signer  string    `json:"signer,omitempty"`
	Message string    `json:"message"`
	// FromEtcdRemoval is At relative to the removal of the old machine's etcd member ("+12.5s").
	FromEtcdRemoval string `json:"fromEtcdRemoval,omitempty"`
}

// watchRecorder keeps every event of a watch.
type watchRecorder struct {
	mu     sync.Mutex
	events []WatchEvent
}

func (r *watchRecorder) Observe(_ *watch.State, evs []watch.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range evs {
		r.events = append(r.events, WatchEvent{At: e.Time, Kind: string(e.Kind), Member: e.Member, ID: e.ID, Signer: e.Signer, Message: e.Message})
	}
}

// startWatch runs credwatch watch on the workload cluster (cfg: its admin config through the
// balancer; the probe service account is created) until the returned stop is called, which
// returns every event it raised. It writes to the cluster only what watch --create-probe-sa does.
//
// Like watch --capi-cluster, it reads the Cluster API view of the management cluster mgmt every
// interval (clusterapi.Reader on the Cluster default/w1): members are related to their Machines,
// and a roll KubeadmControlPlane stops is a finding.
func startWatch(ctx context.Context, cfg, mgmt *rest.Config, log io.Writer) (stop func() []WatchEvent, err error) {
	rd, err := clusterapi.NewReader(mgmt)
	if err != nil {
		return nil, err
	}
	ref := clusterapi.Ref{Namespace: "default", Name: "w1"}
	rec := &watchRecorder{}
	w, err := watch.New(watch.Config{Check: check.Config{REST: cfg, CreateProbeSA: true}, Interval: capiWatchInterval,
		ClusterAPI: func(ctx context.Context) (*check.ClusterAPI, error) { return rd.ControlPlane(ctx, ref) },
		Observers:  []watch.Observer{rec}})
	if err != nil {
		return nil, fmt.Errorf("watch on the workload cluster: %w", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := w.Run(wctx)
		fmt.Fprintf(log, "watch: %d intervals, %d reached the cluster\n", s.Intervals, s.Reached)
	}()
	return func() []WatchEvent {
		cancel()
		<-done
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.events
	}, nil
}

// writeWatch prints the events a watch (who) raised, timed from the roll's start and from the
// etcd member's removal.
func writeWatch(w io.Writer, who string, started time.Time, evs []WatchEvent) {
	if len(evs) == 0 {
		return
	}
	fmt.Fprintf(w, "What %s said (every %s):\n", who, capiWatchInterval)
	tw := report.NewTabWriter(w)
	report.Row(tw, "AFTER", "ETCD REMOVAL", "EVENT", "MEMBER", "ID", "MESSAGE")
	for _, e := range evs {
		report.Row(tw, fmt.Sprintf("%+.1fs", e.At.Sub(started).Seconds()), e.FromEtcdRemoval, e.Kind, e.Member, e.ID, report.Cut(e.Message, 110))
	}
	_ = tw.Flush()
}
