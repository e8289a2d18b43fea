// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/credwatch/credwatch/pkg/kubelet"
)

// loopPoll is how often the host's processes are read again while waiting for a looping kubelet.
const loopPoll = 200 * time.Millisecond

// hostConsumers adds the host's processes that read a local config as its consumers: kubelets and
// the control-plane components systemd runs, which no Pod shows. A kubelet the cluster's Events
// show restarting in a loop exits at start-up, so it is seldom running when /proc is read: the
// reading is repeated, up to LoopWait, until it has started again.
func (d *discoverer) hostConsumers(ctx context.Context, local map[*Config][]Consumer) {
	procs, err := d.o.Processes()
	if err != nil {
		d.inv.Notes = append(d.inv.Notes, err.Error())
		return
	}
	var loops []kubelet.Loop
	if d.cs != nil {
		loops = d.kubeletLoops(ctx)
	}
	procs = d.awaitLoopers(ctx, procs, loops)
	looping := map[string]kubelet.Loop{}
	for _, lp := range loops {
		looping[lp.Node] = lp
	}
	seen := map[string]bool{}
	for _, l := range d.o.Local {
		for _, p := range procs {
			if !p.reads(l.Source.Path) || slices.ContainsFunc(local[l], func(c Consumer) bool { return c.Component == p.Kind && c.Pod != "" }) {
				continue
			}
			c := p.consumer()
			if lp, ok := looping[p.Node]; ok && p.Kind == Kubelet {
				seen[p.Node] = true
				c.Restarts, c.Looping = lp.Starts, true
				c.How = fmt.Sprintf("kubelet (pid %d) of node %s with --cloud-config %s: it reads the file at every start, and started %d times in the last %s and %s (a crash loop)",
					p.PID, p.Node, p.CloudConfig, lp.Starts, kubelet.LoopWindow, loopState(lp))
			}
			if !slices.ContainsFunc(local[l], func(o Consumer) bool { return o.PID == c.PID }) {
				local[l] = append(local[l], c)
			}
		}
	}
	for _, lp := range loops {
		if !seen[lp.Node] {
			d.inv.Notes = append(d.inv.Notes, fmt.Sprintf("the kubelet of node %s started %d times in the last %s and %s, and was not seen reading a --config file on this host: "+
				"run `credwatch cloud --config <its --cloud-config>` on that node", lp.Node, lp.Starts, kubelet.LoopWindow, loopState(lp)))
		}
	}
}

func loopState(lp kubelet.Loop) string {
	if lp.Status.Registered {
		return "has not posted its node's status since"
	}
	return "never registered its Node"
}

// kubeletLoops are the kubelets that restart in a loop, from their Starting Events and, when
// some kubelet started often enough to be one, the Nodes (a Ready kubelet is not looping).
func (d *discoverer) kubeletLoops(ctx context.Context) []kubelet.Loop {
	starts, err := kubelet.ListStarts(ctx, d.cs, pageSize, d.o.Timeout)
	if err != nil {
		d.partial(err)
		return nil
	}
	now := time.Now()
	if len(kubelet.Loops(starts, nil, now)) == 0 {
		return nil // no kubelet started often enough, whatever its Node says
	}
	nodes, err := listNodes(ctx, d.cs, d.o.Timeout)
	if err != nil {
		d.partial(fmt.Errorf("list nodes: %w", err))
		return nil
	}
	status := map[string]kubelet.Status{}
	for i := range nodes {
		status[nodes[i].Name] = kubelet.StatusOf(&nodes[i])
	}
	return kubelet.Loops(starts, status, now)
}

// awaitLoopers reads the host's processes again until every looping kubelet has been seen
// running, or LoopWait has passed; it returns every process seen, once each.
func (d *discoverer) awaitLoopers(ctx context.Context, procs []Process, loops []kubelet.Loop) []Process {
	missing := func() []string {
		var out []string
		for _, lp := range loops {
			if !slices.ContainsFunc(procs, func(p Process) bool { return p.Kind == Kubelet && p.Node == lp.Node }) {
				out = append(out, lp.Node)
			}
		}
		return out
	}
	m := missing()
	if len(m) == 0 || d.o.LoopWait <= 0 {
		return procs
	}
	if d.o.Progress != nil {
		d.o.Progress("cloud: the kubelet of %v restarts in a loop; waiting up to %s for it to start again, to see which --cloud-config it reads", m, d.o.LoopWait)
	}
	deadline := time.NewTimer(d.o.LoopWait)
	defer deadline.Stop()
	tick := time.NewTicker(loopPoll)
	defer tick.Stop()
	for len(m) > 0 {
		select {
		case <-ctx.Done():
			return procs
		case <-deadline.C:
			return procs
		case <-tick.C:
		}
		more, err := d.o.Processes()
		if err != nil {
			return procs
		}
		for _, p := range more {
			if !slices.ContainsFunc(procs, func(q Process) bool { return q.PID == p.PID }) {
				procs = append(procs, p)
			}
		}
		m = missing()
	}
	return procs
}
