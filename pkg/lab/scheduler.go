// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"fmt"
)

// SchedulerLogFile is the kube-scheduler's log.
func (l *Lab) SchedulerLogFile() string { return l.path("logs", "kube-scheduler.log") }

// startScheduler starts a real kube-scheduler (Options.Version) against the load balancer, with
// leader election, and waits until it is healthy. The lab starts one when it has nodes.
func (l *Lab) startScheduler(ctx context.Context) error {
	bin, err := Binary(l.o.BinDir, l.o.Version, "kube-scheduler")
	if err != nil {
		return err
	}
	if err := l.writeClientKubeconfig("kube-scheduler", "system:kube-scheduler", nil); err != nil {
		return err
	}
	ip := l.controllerIP()
	port, err := l.freePort(ip, 10259, "kube-scheduler")
	if err != nil {
		return err
	}
	kc := l.path("kube-scheduler.kubeconfig")
	args := []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=" + ip,
		fmt.Sprintf("--secure-port=%d", port),
		"--leader-elect=true",
		"--profiling=false",
	}
	r, err := l.startController("kube-scheduler", bin, args, l.SchedulerLogFile())
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.sched = r
	l.logs["kube-scheduler"] = l.SchedulerLogFile()
	l.mu.Unlock()
	return l.waitHealthy(ctx, r.Current(), fmt.Sprintf("https://%s:%d/healthz", ip, port))
}
