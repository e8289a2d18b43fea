// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package proc

import (
	"fmt"
	"sync"
	"time"
)

// Backoff is how long a Restarting process waits before each restart: Initial, doubling up to
// Max; a run that lasted Reset or longer starts the sequence over.
type Backoff struct {
	Initial, Max, Reset time.Duration
}

// KubeletBackoff is the kubelet's back-off for a container that keeps exiting (CrashLoopBackOff):
// 10 s doubling to 5 min, forgotten after 10 min of running (pkg/kubelet/kubelet.go,
// backOffPeriod and MaxContainerBackOff).
func KubeletBackoff() Backoff {
	return Backoff{Initial: 10 * time.Second, Max: 5 * time.Minute, Reset: 10 * time.Minute}
}

// next is the wait before the restart that follows a run of ran, after a wait of prev (0: none yet).
func (b Backoff) next(prev, ran time.Duration) time.Duration {
	if prev == 0 || ran >= b.Reset {
		return b.Initial
	}
	return min(2*prev, b.Max)
}

// Restarting is a process started again whenever it exits, as the kubelet restarts a static pod's
// container: the lab's own kube-controller-manager and kube-scheduler run this way, so a
// controller that lost its lease and exited comes back.
type Restarting struct {
	spec    Spec
	backoff Backoff
	// started is told of every start after the first (the lab records the new pid); exited of
	// every exit it will restart from, with the wait before the restart.
	started func(*Proc)
	exited  func(err error, wait time.Duration)

	mu       sync.Mutex
	cur      *Proc
	restarts int
	lastExit string
	stop     chan struct{}
	done     chan struct{}
}

// RestartOptions are the callbacks of StartRestarting; both may be nil.
type RestartOptions struct {
	Started func(*Proc)
	Exited  func(err error, wait time.Duration)
}

// StartRestarting starts s and restarts it with b until Stop.
func StartRestarting(s Spec, b Backoff, o RestartOptions) (*Restarting, error) {
	p, err := Start(s)
	if err != nil {
		return nil, err
	}
	r := &Restarting{spec: s, backoff: b, started: o.Started, exited: o.Exited, cur: p,
		stop: make(chan struct{}), done: make(chan struct{})}
	go r.loop(p)
	return r, nil
}

func (r *Restarting) loop(p *Proc) {
	defer close(r.done)
	var wait time.Duration
	for {
		t0 := time.Now()
		select {
		case <-r.stop:
			return
		case <-p.done:
		}
		_, err := p.Exited()
		wait = r.backoff.next(wait, time.Since(t0))
		r.mu.Lock()
		r.lastExit = fmt.Sprint(err)
		r.mu.Unlock()
		if r.exited != nil {
			r.exited(err, wait)
		}
		select {
		case <-r.stop:
			return
		case <-time.After(wait):
		}
		np, serr := Start(r.spec)
		if serr != nil {
			if r.exited != nil {
				r.exited(serr, wait)
			}
			continue // p stays the exited process: the next round waits again
		}
		r.mu.Lock()
		r.cur, r.restarts = np, r.restarts+1
		r.mu.Unlock()
		p = np
		if r.started != nil {
			r.started(np)
		}
	}
}

// Current is the process running now (or the last one, if it exited and waits for its restart).
func (r *Restarting) Current() *Proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

// Running reports whether the current process is running.
func (r *Restarting) Running() bool {
	done, _ := r.Current().Exited()
	return !done
}

// Restarts is how many times the process was started again, and how the last run ended ("" when
// it never exited).
func (r *Restarting) Restarts() (n int, lastExit string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.restarts, r.lastExit
}

// Stop ends the restarts and stops the current process (SIGTERM, SIGKILL after grace). A nil
// Restarting is already stopped.
func (r *Restarting) Stop(grace time.Duration) {
	if r == nil {
		return
	}
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
	r.Current().Stop(grace)
}
