// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/finding"
)

// SrcCloud is the cloud-provider credentials and their symptoms (pkg/cloud).
const SrcCloud = "cloud"

// CloudConfig says whether and how check looks at the cloud-provider credentials.
type CloudConfig struct {
	// Skip leaves the cloud out (--no-cloud): the cloud-credentials check is skipped.
	Skip bool
	// Login tests each credential live (--cloud-login). Off by default: repeated failed logins can
	// lock the service account, and a check must not risk that.
	Login bool
	// LoginOptions bound and space the live logins.
	LoginOptions cloud.LoginOptions
}

// What the report says about logins when --cloud-login was not given.
const (
	noLoginNote   = "not attempted: credwatch check logs in to cloud providers only with --cloud-login (or run credwatch cloud)"
	noLoginDetail = "--cloud-login not given"
)

// FetchCloud reads, through pkg/cloud's Fetch, the cloud-provider credentials and the
// controllers' cloud errors (leases and nodes are check's own sources). It never fails the check:
// it returns the observation, or nil and the reason the cloud-credentials check is skipped.
func FetchCloud(ctx context.Context, cs kubernetes.Interface, c CloudConfig, now time.Time, timeout time.Duration) (*cloud.Observation, string) {
	if c.Skip {
		return nil, "--no-cloud"
	}
	obs := cloud.Fetch(ctx, cloud.FetchOptions{Client: cs, NoLogin: !c.Login, NoLoginDetail: noLoginDetail, NoLoginNote: noLoginNote,
		Login: c.LoginOptions, Timeout: timeout, Now: now})
	if obs.Partial && len(obs.Items) == 0 && len(obs.Problems) == 0 && len(obs.Components) == 0 {
		return nil, "could not read the cluster's cloud configuration: " + strings.Join(obs.Errors, "; ")
	}
	return obs, ""
}

// Cloud is the cloud-provider part of the report: every credential found, where, who consumes
// it, its verdict ("not-tested" without --cloud-login), and what could not be read.
type Cloud struct {
	Login         string `json:"login"`
	LoginAttempts int    `json:"loginAttempts"`
	cloud.Inventory
}

func cloudOf(s *Snapshot) *Cloud {
	if s.Cloud == nil {
		return nil
	}
	r := cloud.Judge(s.Cloud, "") // the items with their actions
	return &Cloud{Login: r.Login, LoginAttempts: r.LoginAttempts, Inventory: r.Inventory}
}

// checkCloud reports pkg/cloud's judgement: rejected or untestable credentials, consumers that
// must restart, config problems and the controllers' cloud failures. Stale leases and
// uninitialized nodes are the controllers and nodes checks' (the observation holds neither).
func checkCloud(s *Snapshot) []finding.Finding {
	if s.Cloud == nil {
		return nil
	}
	return cloud.Judge(s.Cloud, "").Findings
}
