// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package watchtest replays check snapshots that a real `credwatch watch` fetched (hack/runbook
// captures them on a lab) through the current pkg/watch, for the generators and tests that show
// or check what watch prints.
package watchtest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/watch"
)

// Replay runs a watcher whose intervals fetch snaps, one each, in order, and returns when they are
// used up or ctx is done. The clock is the snapshots' own, so the events' times are the capture's.
// interval is the watcher's (Config.Interval; metrics are read every interval).
func Replay(ctx context.Context, snaps []*check.Snapshot, interval time.Duration, observers ...watch.Observer) error {
	if len(snaps) == 0 {
		return errors.New("replay: no snapshots")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	next := 0
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return snaps[min(next, len(snaps)-1)].Now
	}
	fetch := func(context.Context, check.MembersConfig) (*check.Snapshot, error) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(snaps) {
			cancel() // the replay is over: the watcher stops without observing this interval
			return nil, errors.New("end of the capture")
		}
		next++
		return snaps[next-1], nil
	}
	w, err := watch.New(watch.Config{Check: check.Config{Now: now}, Interval: interval, MetricsEvery: 1,
		Fetch: fetch, Observers: observers})
	if err != nil {
		return err
	}
	w.Run(ctx)
	return nil
}
