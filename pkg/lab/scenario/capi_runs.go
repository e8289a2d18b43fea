// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capilab"
)

// runSampler reads the new machines' kube-apiserver runs every second during the roll: the kubelet
// removes the log directory of a static pod whose manifest changed about a minute after the
// change, so the first run would be gone by the time the roll ends.
type runSampler struct {
	mu   sync.Mutex
	runs map[string]map[string]capilab.Run // machine -> file -> run
}

// sample runs until ctx is done, reading the runs of every host not in before.
func (s *runSampler) sample(ctx context.Context, c *capilab.Lab, before []string) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		for _, m := range c.Pool().Names() {
			if slices.Contains(before, m) {
				continue
			}
			runs, err := c.APIServerRuns(m)
			if err != nil {
				continue // not seen by the roll yet
			}
			s.mu.Lock()
			if s.runs == nil {
				s.runs = map[string]map[string]capilab.Run{}
			}
			if s.runs[m] == nil {
				s.runs[m] = map[string]capilab.Run{}
			}
			for _, r := range runs {
				s.runs[m][r.File] = r
			}
			s.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// result is every run seen, by machine, oldest first.
func (s *runSampler) result() map[string][]capilab.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out map[string][]capilab.Run
	for m, byFile := range s.runs {
		var runs []capilab.Run
		for _, r := range byFile {
			runs = append(runs, r)
		}
		slices.SortFunc(runs, func(a, b capilab.Run) int { return a.First.Compare(b.First) })
		if out == nil {
			out = map[string][]capilab.Run{}
		}
		out[m] = runs
	}
	return out
}
