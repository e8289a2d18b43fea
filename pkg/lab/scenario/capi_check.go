// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/clusterapi"
)

// checkManagement runs check's Cluster API checks on what `check --capi-cluster w1 -n default`
// reads of the management lab (the control-plane Machines, the KubeadmControlPlane, the
// inventory's version) and returns their findings as "ID: message", or the read's error.
func checkManagement(ctx context.Context, env *Env) []string {
	r, err := clusterapi.NewReader(env.Lab.RESTConfig())
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	ca, err := r.ControlPlane(ctx, clusterapi.Ref{Namespace: "default", Name: "w1"})
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	var checks []check.Check
	for _, c := range check.Registry() {
		if c.Name == "capi-roll" {
			checks = append(checks, c)
		}
	}
	rep := check.Run(&check.Snapshot{ClusterAPI: ca, Sources: map[string]string{}}, checks)
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.ID+": "+f.Message)
	}
	return out
}
