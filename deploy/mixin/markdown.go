// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin

import (
	"fmt"
	"strings"
)

// Markdown is docs/metrics.md's table of the mixin: each alert and recording rule, the
// kube-apiserver series it reads and the first Kubernetes line that exports them all.
func Markdown(c Config) (string, error) {
	groups, err := Groups(c)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| rule | kind | for | severity | kube-apiserver series it reads | from |\n|---|---|---|---|---|---|\n")
	for _, g := range groups {
		for _, r := range g.Rules {
			kind, forS, sev := "recording", "", ""
			name := r.Name()
			if r.Alert != "" {
				kind, sev = "alert", r.Severity
				name = fmt.Sprintf("[`%s`](runbook.md#%s)", r.Alert, r.Runbook)
				if r.For > 0 {
					forS = promDuration(r.For)
				}
			} else {
				name = "`" + name + "`"
			}
			var uses []string
			for _, s := range r.Uses {
				u := "`" + s.Family() + "`"
				if len(s.Labels) > 0 {
					u = fmt.Sprintf("`%s{%s}`", s.Family(), strings.Join(s.Labels, ","))
				}
				uses = append(uses, u)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", name, kind, forS, sev, strings.Join(uses, ", "), r.Since())
		}
	}
	return b.String(), nil
}
