// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
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
