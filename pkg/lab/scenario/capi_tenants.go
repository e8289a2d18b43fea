// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/lab/tally"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
)

// capiTenants are the pods that call the workload cluster through its balancer during a roll,
// one new connection per request, as the first report's pods did through the kubernetes Service.
var capiTenants = tenant.Options{Namespace: "tenants", Pods: 4, Interval: 250 * time.Millisecond, Unscheduled: true, RequestTimeout: 5 * time.Second}

// lateTenants are pods created, and given their tokens, through the new machine once the old
// machine's etcd member is gone: pods the old apiserver has never seen, as a Deployment's new
// Pods during the roll are.
var lateTenants = tenant.Options{Namespace: "tenants-late", Pods: 4, Interval: 250 * time.Millisecond, Unscheduled: true, RequestTimeout: 5 * time.Second}

// startTenants starts o on c's workload cluster with the admin kubeconfig Cluster API wrote. The
// pods call the API through the LabCluster's balancer (the kubeconfig's server); via, when set,
// is the member URL their objects and tokens are made through.
func startTenants(ctx context.Context, c *capilab.Lab, o tenant.Options, via string, log io.Writer) (*tenant.Tenant, error) {
	cfg, err := workloadREST(ctx, c)
	if err != nil {
		return nil, err
	}
	if via != "" {
		o.Target, cfg.Host = cfg.Host, via
	}
	o.Log = log
	t, err := tenant.New(cfg, o)
	if err != nil {
		return nil, err
	}
	if err := t.Start(ctx); err != nil {
		return nil, fmt.Errorf("tenants %s on the workload cluster: %w", o.Namespace, err)
	}
	return t, nil
}

// workloadREST is the admin configuration Cluster API wrote for c's workload cluster; its server
// is the LabCluster's balancer.
func workloadREST(ctx context.Context, c *capilab.Lab) (*rest.Config, error) {
	kc, err := c.WorkloadKubeconfig(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return nil, fmt.Errorf("workload kubeconfig: %w", err)
	}
	return cfg, nil
}

// lateStart starts lateTenants through the machine that joined, in a goroutine, once the first
// old machine's etcd member is removed; wait returns them (nil if they never started).
type lateStart struct {
	c      *capilab.Lab
	before []string
	log    io.Writer
	once   sync.Once
	done   chan struct{}
	t      *tenant.Tenant
	err    error
}

func (l *lateStart) onPhase(ctx context.Context) func(capilab.Phase) {
	return func(p capilab.Phase) {
		if p.What != capilab.PhaseMemberRemoved || !slices.Contains(l.before, p.Machine) {
			return
		}
		l.once.Do(func() {
			go func() {
				defer close(l.done)
				for _, n := range l.c.Pool().Names() {
					if h, ok := l.c.Pool().Get(n); ok && !slices.Contains(l.before, n) {
						l.t, l.err = startTenants(ctx, l.c, lateTenants, "https://"+net.JoinHostPort(h.IP().String(), "6443"), l.log)
						return
					}
				}
				l.err = errors.New("no new machine's host to create the late pods through")
			}()
		})
	}
}

func (l *lateStart) wait(ctx context.Context) (*tenant.Tenant, error) {
	started := false
	l.once.Do(func() { close(l.done) }) // never triggered: nothing to wait for
	select {
	case <-l.done:
		started = l.t != nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if !started {
		return nil, l.err
	}
	return l.t, nil
}

// machinesPhase is one phase of the evidence: what the tenant's pods got from each machine's
// apiserver (named by the node name in its kubeadm serving certificate) and what that apiserver
// logged when it rejected a token; seen counts, by machine, the log lines earlier phases took
// (nil: the phase's requests are also in another phase, which has the lines).
func machinesPhase(c *capilab.Lab, name, window string, r capilab.Roll, machines []string, snap tally.Snapshot, seen map[string]int) Phase {
	p := Phase{Name: name, Window: window, Tenants: snap}
	for _, m := range machines {
		role := "new machine"
		if slices.Contains(r.Before, m) {
			role = "old machine"
		}
		var lines []string
		if seen != nil {
			var err error
			if lines, err = c.AuthLines(m); err != nil {
				lines = []string{err.Error()}
			}
			if b := seen[m]; b <= len(lines) {
				lines = lines[b:]
			}
			seen[m] += len(lines)
		}
		mt := snap.Member(m)
		me := MemberEvidence{Name: m, Version: c.Line().Kubernetes, Role: role, Requests: mt.Requests, Unauthorized: mt.Unauthorized,
			Statuses: mt.Statuses, AuthMessages: countMessages(lines)}
		if len(lines) > maxLinesPerMember {
			lines = lines[:maxLinesPerMember]
		}
		me.AuthLines = lines
		p.Members = append(p.Members, me)
	}
	return p
}
