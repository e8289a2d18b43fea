// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/report"
	"github.com/credwatch/credwatch/pkg/watch"
)

// inClusterEvents are the events the chart's watcher (capilab.InstallWatcher) wrote as JSON
// lines (watch -o json) between from and to.
func inClusterEvents(c *capilab.Lab, from, to time.Time) []WatchEvent {
	return watchEventsOf(c.WatcherLines(from, to))
}

// watchEventsOf picks watch's events out of its log lines (one JSON object per event; its
// diagnostics are not JSON).
func watchEventsOf(lines []capilab.LogLine) []WatchEvent {
	var out []WatchEvent
	for _, l := range lines {
		var e watch.Event
		if !strings.HasPrefix(l.Text, "{") || json.Unmarshal([]byte(l.Text), &e) != nil || e.Kind == "" {
			continue
		}
		out = append(out, WatchEvent{At: e.Time, Kind: string(e.Kind), Member: e.Member, ID: e.ID, Signer: e.Signer, Message: e.Message})
	}
	return out
}

// fromRemoval sets each event's time relative to removed (the old machine's etcd member
// removal); nothing when that is unknown.
func fromRemoval(evs []WatchEvent, removed time.Time) {
	if removed.IsZero() {
		return
	}
	for i := range evs {
		evs[i].FromEtcdRemoval = fmt.Sprintf("%+.1fs", evs[i].At.Sub(removed).Seconds())
	}
}

// RollLogs is what credwatch logs said of a roll's kube-apiserver logs: the verdict's causes
// and, per member and minute of the roll, the lines of each cause.
type RollLogs struct {
	// Source is where the logs were read: "logs --from-cluster" (through the API after the
	// roll: only the members that are left) or "the hosts' files" (every member's, removed
	// ones included, as the lab keeps them).
	Source  string   `json:"source"`
	Members []string `json:"members"`
	Error   string   `json:"error,omitempty"`
	// Verdict is the ranked causes, each "cause ×count on hosts: first line".
	Verdict []string `json:"verdict,omitempty"`
	// PerMinute are the lines of each cause and context event (an etcd member removed, a
	// leader election lost, ...) per member and minute after the roll's start.
	PerMinute []capilab.MemberMinute `json:"perMinute,omitempty"`
}

// rollLogs runs credwatch logs' analysis on ins for the window [from, to).
func rollLogs(ctx context.Context, source string, ins []logs.Input, from, to time.Time) RollLogs {
	rl := RollLogs{Source: source}
	for _, in := range ins {
		rl.Members = append(rl.Members, in.Host)
	}
	slices.Sort(rl.Members)
	rl.Members = slices.Compact(rl.Members)
	rep, err := logs.Analyze(ctx, logs.Config{Since: from}, ins)
	if err != nil {
		rl.Error = err.Error()
		return rl
	}
	for _, h := range rep.Verdict {
		first := ""
		if len(h.Evidence) > 0 {
			first = h.Evidence[0].Line
		}
		rl.Verdict = append(rl.Verdict, fmt.Sprintf("%s ×%d on %s: %.200s", h.Cause, h.Count, strings.Join(h.Hosts, ", "), first))
	}
	for _, g := range slices.Concat(rep.Failures, rep.Context) { // causes, then context events (an etcd member removed, ...)
		for _, m := range g.PerMinute {
			at := m.Minute.Time()
			if at.Before(from.Truncate(time.Minute)) || !at.Before(to) {
				continue
			}
			rl.PerMinute = append(rl.PerMinute, capilab.MemberMinute{Member: g.Host, Minute: int(at.Sub(from.Truncate(time.Minute)) / time.Minute),
				Kind: g.Cause, Lines: m.Count})
		}
	}
	sort.SliceStable(rl.PerMinute, func(i, j int) bool {
		a, b := rl.PerMinute[i], rl.PerMinute[j]
		if a.Minute != b.Minute {
			return a.Minute < b.Minute
		}
		return a.Member < b.Member
	})
	return rl
}

// logsOfRoll reads the roll's kube-apiserver logs twice, as credwatch logs would: through the
// API after the roll (logs --from-cluster: the members left) and from every member's files.
func logsOfRoll(ctx context.Context, c *capilab.Lab, wcfg *rest.Config, r capilab.Roll, to time.Time) []RollLogs {
	var out []RollLogs
	cs, err := kubernetes.NewForConfig(wcfg)
	if err == nil {
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		var ins []logs.Input
		ins, err = logs.ClusterInputs(lctx, cs.CoreV1().Pods("kube-system"), logs.ClusterOptions{Selectors: logs.DefaultSelectors, SinceTime: r.Started})
		if err == nil {
			out = append(out, rollLogs(lctx, "logs --from-cluster", ins, r.Started, to))
		}
		cancel()
	}
	if err != nil {
		out = append(out, RollLogs{Source: "logs --from-cluster", Error: err.Error()})
	}
	var ins []logs.Input
	for _, m := range append(append([]string(nil), r.Before...), r.After...) {
		files, err := c.APIServerLogs(m)
		if err != nil {
			continue
		}
		for _, f := range files {
			ins = append(ins, logs.Input{Name: f, Host: m, HostGiven: true, Component: "kube-apiserver",
				Open: func() (io.ReadCloser, error) { return os.Open(f) }})
		}
	}
	return append(out, rollLogs(ctx, "the hosts' files", ins, r.Started, to))
}

// writeRollLogs prints what credwatch logs said of the roll.
func writeRollLogs(w io.Writer, rls []RollLogs) {
	for _, rl := range rls {
		fmt.Fprintf(w, "credwatch logs, %s (%s):", rl.Source, strings.Join(rl.Members, ", "))
		if rl.Error != "" {
			fmt.Fprintf(w, " %s\n", rl.Error)
			continue
		}
		fmt.Fprintln(w)
		for _, v := range rl.Verdict {
			fmt.Fprintf(w, "  %s\n", report.Cut(v, 160))
		}
		tw := report.NewTabWriter(w)
		report.Row(tw, "  MINUTE", "MEMBER", "CAUSE", "LINES")
		for _, m := range rl.PerMinute {
			report.Row(tw, fmt.Sprintf("  %d", m.Minute), m.Member, m.Kind, fmt.Sprint(m.Lines))
		}
		_ = tw.Flush()
	}
}
