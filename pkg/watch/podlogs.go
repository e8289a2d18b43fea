// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/logs"
)

// podLogOverlap is how far before the previous poll the next read starts, for lines the kubelet
// had not flushed yet and a node clock a little behind; lines at or before the last one read are
// dropped.
const podLogOverlap = 2 * time.Second

// podLines are the new lines of one static pod's kube-apiserver log.
type podLines struct {
	member string // the member's name: its static pod's name
	source string // pod/container
	lines  []string
}

// podLogs follows the kube-apiserver static pods' logs through the API (logs.ClusterInputs with
// timestamps): each poll reads every pod's log since the last line read, and keeps only lines
// newer than it. A pod seen at the first poll is read from then on; one that appears later from
// the previous poll on (a member that joins mid-roll started after it).
type podLogs struct {
	pods   corev1client.PodInterface
	last   map[string]time.Time // by source: the timestamp of the last line read (the node's clock)
	polled time.Time            // when the last poll started (the watch's clock)
}

func newPodLogs(pods corev1client.PodInterface) *podLogs {
	return &podLogs{pods: pods, last: map[string]time.Time{}}
}

// poll reads the new lines of every pod. Errors of single pods are joined; the lines of the
// others are returned.
func (p *podLogs) poll(ctx context.Context, now time.Time) ([]podLines, error) {
	since := p.polled
	first := since.IsZero()
	if first {
		since = now
	}
	p.polled = now
	ins, err := logs.ClusterInputs(ctx, p.pods, logs.ClusterOptions{Selectors: logs.DefaultSelectors,
		SinceTime: since.Add(-podLogOverlap), Timestamps: true})
	if err != nil {
		return nil, fmt.Errorf("follow kube-apiserver pod logs: %w", err)
	}
	var out []podLines
	var errs []error
	for _, in := range ins {
		last, seen := p.last[in.Name]
		if !seen {
			last = since // lines from before the pod was first seen are not new
			if !first {
				last = time.Time{}
			}
		}
		lines, newest, err := readPodLog(in, last)
		if err != nil {
			errs = append(errs, err)
		}
		p.last[in.Name] = newest
		member, _, _ := strings.Cut(in.Name, "/")
		out = append(out, podLines{member: member, source: in.Name, lines: lines})
	}
	p.forget(ins)
	return out, errors.Join(errs...)
}

// forget drops the pods no longer listed.
func (p *podLogs) forget(ins []logs.Input) {
	listed := map[string]bool{}
	for _, in := range ins {
		listed[in.Name] = true
	}
	for k := range p.last {
		if !listed[k] {
			delete(p.last, k)
		}
	}
}

// readPodLog reads one pod log streamed with timestamps and returns the lines after last, without
// their timestamps, and the newest timestamp read (last when none is newer).
func readPodLog(in logs.Input, last time.Time) ([]string, time.Time, error) {
	rc, err := in.Open()
	if err != nil {
		return nil, last, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), tailLineMax)
	var lines []string
	newest := last
	for sc.Scan() {
		ts, line, ok := cutTimestamp(sc.Text())
		if ok && !ts.After(last) {
			continue
		}
		if ok && ts.After(newest) {
			newest = ts
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return lines, newest, fmt.Errorf("read log of %s: %w", in.Name, err)
	}
	return lines, newest, nil
}

// cutTimestamp splits the kubelet's RFC 3339 timestamp off a line read with timestamps.
func cutTimestamp(s string) (time.Time, string, bool) {
	ts, rest, ok := strings.Cut(s, " ")
	if !ok {
		ts, rest = s, ""
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return time.Time{}, s, false
	}
	return t, rest, true
}

// followPods starts reading the static pods' new log lines, alongside the interval's fetch, when
// prev had a static-pod member; the returned func waits for them. Errors go to the log causes'
// errors (State.Sources check.SrcPodLogs).
func (w *Watcher) followPods(ctx context.Context, prev *State, now time.Time) func() []podLines {
	if w.pods == nil || prev == nil || !slices.ContainsFunc(prev.Members, func(m MemberState) bool { return m.StaticPod != "" }) {
		if w.logs != nil {
			delete(w.logs.errs, check.SrcPodLogs) // not read this interval: an earlier error is not this one's
		}
		return func() []podLines { return nil }
	}
	done := make(chan []podLines, 1)
	go func() {
		pctx, cancel := context.WithTimeout(ctx, w.c.Check.Timeout)
		defer cancel()
		pl, err := w.pods.poll(pctx, now)
		if err != nil {
			w.logs.errs[check.SrcPodLogs] = check.ReasonOf(err)
		} else {
			delete(w.logs.errs, check.SrcPodLogs)
		}
		done <- pl
	}()
	return func() []podLines { return <-done }
}
