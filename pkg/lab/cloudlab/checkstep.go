// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/cloud"
)

// checkFindings runs credwatch check (without cloud logins) on the lab as a step left it and
// returns its findings at warning or above, "id object-or-member"; skipped checks are left out
// (the lab has no probe service account, so the trust checks are skipped).
func (r *runner) checkFindings(ctx context.Context) []string {
	c := check.Config{REST: r.env.Lab.RESTConfig(), Timeout: 10 * time.Second}
	for _, m := range r.env.Lab.Members() {
		c.Endpoints = append(c.Endpoints, m.URL)
	}
	snap, err := check.Fetch(ctx, c)
	if err != nil {
		return []string{"check failed: " + err.Error()}
	}
	var out []string
	for _, f := range check.Run(snap, check.Registry()).Findings {
		if f.ID == "check-skipped" || !f.Severity.AtLeast(catalogue.Warning) {
			continue
		}
		out = append(out, f.ID+" "+f.Where())
	}
	return out
}

// cloudFindings runs credwatch cloud --config on the era's host files (logging in to the
// simulator, reading the host's processes, waiting for a crash-looping kubelet to start again)
// and returns its findings at warning or above, "id object", then the consumers it names stale or
// crash-looping.
func (r *runner) cloudFindings(ctx context.Context) []string {
	cfgs, errs := cloud.LoadPaths(r.env.CloudConfigs)
	if len(errs) > 0 {
		return []string{"cloud failed: " + errors.Join(errs...).Error()}
	}
	cs, err := kubernetes.NewForConfig(r.env.Lab.RESTConfig())
	if err != nil {
		return []string{"cloud failed: " + err.Error()}
	}
	obs := cloud.Fetch(ctx, cloud.FetchOptions{Configs: cfgs, Client: cs, Timeout: 10 * time.Second,
		Host: cloud.DiscoverOptions{Processes: cloud.HostProcesses("/proc"), LoopWait: 2 * KubeletServiceRestart, Progress: r.env.logf}})
	rep := cloud.Judge(obs, "")
	var out []string
	for _, f := range rep.Findings {
		if f.Severity.AtLeast(catalogue.Warning) {
			out = append(out, f.ID+" "+f.Where())
		}
	}
	for _, it := range rep.Items {
		for _, c := range it.Consumers {
			who := "consumer " + c.Component
			if c.Node != "" {
				who += " on " + c.Node
			}
			switch {
			case c.Looping:
				out = append(out, fmt.Sprintf("%s (crash-looping, %d starts) of %s", who, c.Restarts, it.Source))
			case c.Stale:
				out = append(out, fmt.Sprintf("%s (stale: started before the file changed) of %s", who, it.Source))
			}
		}
	}
	return out
}
