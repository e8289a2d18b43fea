// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package mixin is credwatch's credential mixin: alerts, recording rules and a Grafana dashboard
// on series kube-apiserver itself exports, so that they need no credwatch process. It is the one
// source of the files kubernetes-mixin users expect (deploy/mixin/alerts.yaml, rules.yaml,
// dashboards/credwatch-credentials.json), of a plain PrometheusRule (prometheusrule.yaml) and of
// the chart's copy (deploy/helm/credwatch/files/mixin.yaml); TestGolden writes them all
// (go test ./deploy/mixin -run TestGolden -args -update).
//
// Every rule declares the kube-apiserver series it reads (Rule.Uses), with the labels it reads
// and the first Kubernetes line that exports them; TestIntegrationSeriesExist holds those
// declarations against real lab members of each lab line.
package mixin

import (
	"fmt"
	"strings"
	"time"
)

// Config holds what a user overrides, as a kubernetes-mixin's _config does.
type Config struct {
	// APIServerSelector selects kube-apiserver's scrape (kubernetes-mixin's kubeApiserverSelector).
	APIServerSelector string
	// ClusterLabel is the label that tells clusters apart in a shared Prometheus; rules group by
	// it, and a Prometheus of one cluster, without it, loses nothing.
	ClusterLabel string
	// RunbookURL is where docs/runbook.md is served; an alert's runbook_url is it plus an anchor.
	RunbookURL string
	// FailureRatio is the share of a member's authentication attempts that fail before
	// CredwatchAPIServerAuthFailures fires.
	FailureRatio float64
	// RollGap is how far a member's failure ratio must exceed that of the other members together
	// for CredwatchAPIServerRejectsWhatOthersAccept (the roll signature).
	RollGap float64
	// MinAttemptRate (attempts/s) keeps a member that sees almost no traffic from alerting on a
	// ratio of a handful of requests.
	MinAttemptRate float64
	// SignerKeysStale is how old a member's last successful key fetch from its external signer
	// may be (the signer's refresh hint is usually a minute or so).
	SignerKeysStale time.Duration
	// CertWarning and CertCritical are the remaining lifetimes of client certificates that warn
	// and page.
	CertWarning, CertCritical time.Duration
}

// DefaultConfig is what the committed files are rendered with.
func DefaultConfig() Config {
	return Config{
		APIServerSelector: `job="apiserver"`,
		ClusterLabel:      "cluster",
		RunbookURL:        "https://github.com/credwatch/credwatch/blob/main/docs/runbook.md",
		FailureRatio:      0.10,
		RollGap:           0.10,
		MinAttemptRate:    0.05,
		SignerKeysStale:   10 * time.Minute,
		CertWarning:       7 * 24 * time.Hour,
		CertCritical:      24 * time.Hour,
	}
}

// Validate reports a Config that cannot render working rules.
func (c Config) Validate() error {
	switch {
	case c.APIServerSelector == "":
		return fmt.Errorf("mixin: empty APIServerSelector")
	case c.ClusterLabel == "":
		return fmt.Errorf("mixin: empty ClusterLabel")
	case !strings.HasPrefix(c.RunbookURL, "http"):
		return fmt.Errorf("mixin: RunbookURL %q is not an http(s) URL", c.RunbookURL)
	case c.FailureRatio <= 0 || c.FailureRatio >= 1 || c.RollGap <= 0 || c.RollGap >= 1:
		return fmt.Errorf("mixin: FailureRatio %g and RollGap %g must be between 0 and 1", c.FailureRatio, c.RollGap)
	case c.SignerKeysStale <= 0 || c.CertCritical <= 0 || c.CertWarning <= c.CertCritical:
		return fmt.Errorf("mixin: SignerKeysStale %s, CertCritical %s, CertWarning %s: want positive, CertWarning above CertCritical",
			c.SignerKeysStale, c.CertCritical, c.CertWarning)
	}
	return nil
}

// Series is a kube-apiserver series a rule reads.
type Series struct {
	// Name is the name in the expression (a histogram's _bucket series: its family is Family()).
	Name string
	// Labels are the labels the rule reads besides the target's (instance, job, cluster).
	Labels []string
	// Values are, for a label a rule matches on, every value kube-apiserver gives it (from the
	// source); the series-exists test fails on a scraped value outside them.
	Values map[string][]string
	// Since is the first Kubernetes minor (v1.N) whose kube-apiserver exports it.
	Since string
	// Help is kube-apiserver's help text, without its stability prefix: the series-exists test
	// looks for it in a line's binary when a scrape cannot show the family (a vector that no
	// event has created a child of yet prints nothing, not even HELP).
	Help string
	// Source is where kube-apiserver defines it (k8s.io/kubernetes paths).
	Source string
}

// Family is the metric family that exports the series (the _bucket, _sum and _count series of a
// histogram belong to the histogram).
func (s Series) Family() string {
	if f, ok := strings.CutSuffix(s.Name, "_bucket"); ok {
		return f
	}
	return s.Name
}

// Rule is one alerting or recording rule.
type Rule struct {
	Alert, Record string
	Expr          string
	For           time.Duration
	Severity      string
	Summary       string
	Description   string
	// Runbook is the anchor of the rule's section in docs/runbook.md.
	Runbook string
	// Uses are the kube-apiserver series the rule reads, directly or through recording rules.
	Uses []Series
}

// Name is the alert's or the recorded series' name.
func (r Rule) Name() string {
	if r.Alert != "" {
		return r.Alert
	}
	return r.Record
}

// Since is the first Kubernetes minor on which every series the rule reads exists.
func (r Rule) Since() string {
	since := "v1.0"
	for _, s := range r.Uses {
		if MinorLess(since, s.Since) {
			since = s.Since
		}
	}
	return since
}

// Group is a rule group.
type Group struct {
	Name  string
	Rules []Rule
}

// MinorLess reports whether Kubernetes version a (v1.N or v1.N.P) is of an earlier minor than b.
func MinorLess(a, b string) bool { return minor(a) < minor(b) }

func minor(v string) int {
	v = strings.TrimPrefix(v, "v")
	_, rest, _ := strings.Cut(v, ".")
	rest, _, _ = strings.Cut(rest, ".")
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}
