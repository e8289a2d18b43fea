// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"errors"
	"fmt"
)

// ErrMemberExited is what RestartMember returns when the restarted kube-apiserver ended before it
// was ready: the member stays in the lab and in the load balancer, stopped, as a static pod in
// CrashLoopBackOff stays behind a balancer whose health check decides.
var ErrMemberExited = errors.New("member exited before it was ready")

// RestartMember stops member name's kube-apiserver and starts it again with the same flags on the
// same host, as the kubelet does after a node reboot or a manifest change, and waits for its
// /readyz up to Options.Wait. When the process ends first, the error wraps ErrMemberExited and
// carries the last lines of its log.
func (l *Lab) RestartMember(ctx context.Context, name string) error {
	m, netns, err := l.runningMember(name)
	if err != nil {
		return err
	}
	m.proc.Stop(stopGrace)
	p, err := startProc(m.Name, netns, m.Args[0], m.Args[1:], m.LogFile)
	if err != nil {
		return fmt.Errorf("restart %s: %w", name, err)
	}
	l.mu.Lock()
	m.proc = p
	l.mu.Unlock()
	l.logf("lab: restarted %s", name)
	_ = l.saveState()
	if err := l.waitMember(ctx, m); err != nil {
		if done, _ := p.Exited(); done {
			return fmt.Errorf("restart %s: %w: %w", name, ErrMemberExited, err)
		}
		return fmt.Errorf("restart %s: %w", name, err)
	}
	return nil
}

// StopSigner stops member name's external signer; its socket goes with it. The member keeps
// running on the keys it fetched last.
func (l *Lab) StopSigner(name string) error {
	m, _, err := l.runningMember(name)
	if err != nil {
		return err
	}
	if m.signer == nil {
		return fmt.Errorf("member %s has no external signer", name)
	}
	m.signer.Stop(stopGrace)
	l.logf("lab: stopped %s of %s", m.signer.Name(), name)
	return nil
}

// StartSigner starts member name's external signer again, serving what it served when it stopped.
func (l *Lab) StartSigner(ctx context.Context, name string) error {
	m, netns, err := l.runningMember(name)
	if err != nil {
		return err
	}
	if m.signer == nil {
		return fmt.Errorf("member %s has no external signer", name)
	}
	s, err := l.startSigner(ctx, name, netns, m.signer.Control())
	if err != nil {
		return err
	}
	l.mu.Lock()
	m.signer = s
	l.mu.Unlock()
	_ = l.saveState()
	return nil
}

// runningMember is the running member name and the network namespace of its host ("" without hosts).
func (l *Lab) runningMember(name string) (*memberProc, string, error) {
	l.mu.Lock()
	var m *memberProc
	for _, x := range l.mems {
		if x.Name == name {
			m = x
		}
	}
	l.mu.Unlock()
	if m == nil {
		return nil, "", fmt.Errorf("no member %q in the lab", name)
	}
	var netns string
	if l.hosts != nil {
		h, ok := l.hosts.Host(controlPlaneHost(memberNumber(name)))
		if !ok {
			return nil, "", fmt.Errorf("member %s: its host is gone", name)
		}
		netns = h.NetNS
	}
	return m, netns, nil
}
