// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"strings"

	"github.com/credwatch/credwatch/pkg/lab/tenant"
	"github.com/credwatch/credwatch/pkg/logs/audit"
	"github.com/credwatch/credwatch/pkg/token"
)

// traceRejected mints a token for pod through member mintOn, presents it to presentTo and traces
// its credential id (JTI=<jti>) through every member's audit log (lab.Options.Audit), as
// `credwatch logs --trace-credential` does: which member minted it, which accepted it. It
// returns the probe and the trace's one-line answer ("" when the lab keeps no audit logs).
func (e *Env) traceRejected(ctx context.Context, pod tenant.Pod, mintOn, presentTo string, expect int) (Probe, string) {
	pr := Probe{Name: fmt.Sprintf("token minted by %s presented to %s, traced through the audit logs", mintOn, presentTo), PresentedTo: presentTo, Expect: expect}
	pr, tok := e.mintAndPresentToken(ctx, pr, pod, mintOn, 0)
	if tok == "" || !e.Lab.Options().Audit {
		return pr, ""
	}
	t, err := token.Decode(tok)
	if err != nil || t.Claims.ID == "" {
		return pr, fmt.Sprintf("the token carries no jti (%v)", err)
	}
	var files []audit.MemberFile
	for _, m := range e.Lab.Members() {
		files = append(files, audit.MemberFile{Member: m.Name, Path: e.Lab.AuditLog(m.Name)})
	}
	r, err := audit.Trace(ctx, audit.Files(files), []string{audit.JTIPrefix + t.Claims.ID})
	if err != nil {
		return pr, "trace: " + err.Error()
	}
	if len(r.Credentials) == 0 {
		return pr, "trace: no answer"
	}
	return pr, traceLine(r.Credentials[0])
}

// traceLine is the trace's answer: the minting members, and the members that accepted it.
func traceLine(c *audit.Credential) string {
	var minted, used []string
	for _, is := range c.Issued {
		minted = append(minted, is.Member)
	}
	for _, u := range c.Used {
		used = append(used, u.Member)
	}
	return fmt.Sprintf("%s minted by [%s], accepted by [%s]: %s", c.ID, strings.Join(minted, " "), strings.Join(used, " "), c.Summary)
}
