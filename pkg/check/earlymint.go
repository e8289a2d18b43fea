// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"sync"
)

// earlyMints are the probe tokens minted through every member beside its probe rather than
// after every probe returned: a member whose calls hang until the deadline (a storage-less
// apiserver, whose /readyz and TokenRequests both wait on etcd) then costs a check one timeout,
// not two (BenchmarkCheckRollLab). The matrix uses a member's token only when its probe found
// it reachable.
type earlyMints struct {
	wg     sync.WaitGroup
	saErr  error // ensureProbeSA's: nothing was minted
	minted []mintResult
}

type mintResult struct {
	token     string
	audiences []string
	err       error
}

// startMints ensures the probe service account, then mints through every member with a client,
// at most f.c.Parallel at once, until wait is called.
func (f *fetcher) startMints(ctx context.Context, clients []*memberClient) *earlyMints {
	e := &earlyMints{minted: make([]mintResult, len(clients))}
	e.wg.Go(func() {
		if e.saErr = f.ensureProbeSA(ctx); e.saErr != nil {
			return
		}
		sem := make(chan struct{}, f.c.Parallel)
		var wg sync.WaitGroup
		for i, mc := range clients {
			if mc == nil {
				continue
			}
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				r := &e.minted[i]
				r.token, r.audiences, r.err = mint(ctx, f.c, mc)
			})
		}
		wg.Wait()
	})
	return e
}

// wait returns once every mint ended.
func (e *earlyMints) wait() { e.wg.Wait() }
