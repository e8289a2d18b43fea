// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/logs/cause"
)

// signerDownAtRestart stops one member's external signer, lets the member run on (it keeps the
// keys it fetched), restarts the member while the signer is still down — kube-apiserver then
// does not start at all: its first FetchKeys and Metadata calls are part of building its options
// (k8s.io/kubernetes pkg/controlplane/apiserver/options, "while setting up external-jwt-signer")
// — and finally starts the signer and the member again.
func signerDownAtRestart(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("signer-down-at-restart")
	ev := env.evidence(s)
	names := env.memberNames()
	down, other := names[len(names)/2], names[0]
	if _, err := env.memberSigner(down); err != nil {
		return nil, err
	}
	t, err := env.startTenant(ctx, s.Name, tenant.Options{RefreshEvery: 4 * time.Second})
	if err != nil {
		return nil, err
	}
	defer t.Stop()
	pod := t.Pods()[0]

	// 1. The signer stops; the member serves on with the keys it holds.
	p := env.begin("the signer of "+down+" stops; "+down+" keeps running", t)
	p.role(down, "its signer is down")
	if err := env.Lab.StopSigner(down); err != nil {
		return nil, err
	}
	if err := sleep(ctx, env.window()); err != nil {
		return nil, err
	}
	p.probe(env.crossProbe(ctx, pod, other, down, http.StatusCreated))
	p.probe(env.crossProbe(ctx, pod, down, other, 0)) // its Sign call fails: measured
	ph := p.end()
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)

	// 2. The member restarts while its signer is down and never serves.
	p = env.begin(down+" restarts while its signer is down", t)
	p.role(down, "restarted while its signer is down")
	t0 := time.Now()
	err = env.Lab.RestartMember(ctx, down)
	switch {
	case err == nil:
		return nil, fmt.Errorf("%s restarted and served although its signer is down", down)
	case !errors.Is(err, lab.ErrMemberExited):
		return nil, err
	}
	p.measured["exited after"] = time.Since(t0).Round(100 * time.Millisecond).String()
	if line := env.startupError(down); line != "" {
		p.measured["exit message"] = line
		p.measured["credwatch logs cause"] = logsCause(down, line)
	}
	if err := sleep(ctx, env.window()/2); err != nil {
		return nil, err
	}
	p.probe(env.crossProbe(ctx, pod, other, down, 0))
	ph = p.end()
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)

	// 3. The signer is back: the member starts and serves.
	p = env.begin("the signer of "+down+" is back; "+down+" restarts", t)
	p.role(down, "restarted with its signer")
	if err := env.Lab.StartSigner(ctx, down); err != nil {
		return ev, err
	}
	if err := env.Lab.RestartMember(ctx, down); err != nil {
		return ev, fmt.Errorf("%s with its signer back: %w", down, err)
	}
	if err := sleep(ctx, env.window()/2); err != nil {
		return nil, err
	}
	p.probe(env.crossProbe(ctx, pod, other, down, http.StatusCreated))
	p.probe(env.crossProbe(ctx, pod, down, other, http.StatusCreated))
	ph = p.end()
	ph.Findings = env.checkFindings(ctx)
	ev.Phases = append(ev.Phases, ph)
	t.Stop()
	return finish(ev), nil
}

// startupError is the last line member logged of its external signer at start
// ("while setting up external-jwt-signer: ..."), without its klog header, or "".
func (e *Env) startupError(member string) string {
	lines := e.memberLines(member, func(line string) bool { return strings.Contains(line, "external-jwt-signer") })
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1]
}

// logsCause is the cause credwatch logs gives member's log line, "none" when it names none.
func logsCause(member, line string) string {
	r := logs.ParseLine(line, member, "kube-apiserver", time.Now())
	if ev, ok := logs.Classify(cause.NewClassifier(catalogue.Default()), r); ok {
		return ev.Cause
	}
	return "none"
}
