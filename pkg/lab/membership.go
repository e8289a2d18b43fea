// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// AddMember joins a new etcd member, starts a new apiserver on it, waits for its /readyz and adds
// it to the load balancer.
func (l *Lab) AddMember(ctx context.Context, o MemberOptions) (Member, error) {
	l.opMu.Lock()
	defer l.opMu.Unlock()
	if err := l.checkUp(); err != nil {
		return Member{}, err
	}
	v := o.Version
	if v == "" {
		v = l.o.Version
	}
	if _, err := Binary(l.o.BinDir, v, "kube-apiserver"); err != nil {
		return Member{}, err
	}
	e, err := l.etcd.Add(ctx)
	if err != nil {
		return Member{}, err
	}
	m, err := l.startMember(ctx, o, e.Name)
	if err == nil {
		err = l.waitMember(ctx, m)
		if err != nil {
			l.stopMember(m)
		}
	}
	if err != nil {
		return Member{}, errors.Join(err, l.etcd.Remove(context.Background(), e.Name))
	}
	l.lb.Add(m.Name, m.Address, true)
	l.logf("lab: %s joined the load balancer", m.Name)
	return cloneMember(m.Member), l.saveState()
}

// RemoveMember removes an apiserver and its etcd member. By default the apiserver goes first;
// EtcdFirst removes the etcd member first; KeepAPIServer removes only the etcd member and leaves
// the apiserver running and in the load balancer (call RemoveMember again later to stop it).
func (l *Lab) RemoveMember(ctx context.Context, name string, o RemoveOptions) error {
	l.opMu.Lock()
	defer l.opMu.Unlock()
	if err := l.checkUp(); err != nil {
		return err
	}
	l.mu.Lock()
	idx := slices.IndexFunc(l.mems, func(m *memberProc) bool { return m.Name == name })
	var m *memberProc
	var shared bool
	if idx >= 0 {
		m = l.mems[idx]
		for _, o := range l.mems {
			if o != m && o.EtcdName == m.EtcdName {
				shared = true
			}
		}
	}
	l.mu.Unlock()
	if m == nil {
		return fmt.Errorf("no lab member %q (members: %v)", name, l.memberNames())
	}
	removeEtcd := func() error {
		if m.etcdRemoved || shared {
			return nil
		}
		if err := l.etcd.Remove(ctx, m.EtcdName); err != nil {
			return err
		}
		l.mu.Lock()
		m.etcdRemoved = true
		l.mu.Unlock()
		return nil
	}
	if o.EtcdFirst || o.KeepAPIServer {
		if err := removeEtcd(); err != nil {
			return err
		}
		if !o.KeepAPIServer {
			l.stopMember(m)
		}
		return l.saveState()
	}
	l.stopMember(m)
	if err := removeEtcd(); err != nil {
		return err
	}
	return l.saveState()
}

// Roll replaces every current member one by one, like a KubeadmControlPlane rollout: add a new
// member with o, remove the old member's etcd member, then stop the old apiserver. step (may be
// nil) is called after each replacement.
func (l *Lab) Roll(ctx context.Context, o MemberOptions, step func(added, removed Member)) error {
	for _, old := range l.Members() {
		added, err := l.AddMember(ctx, o)
		if err != nil {
			return fmt.Errorf("roll: replacing %s: %w", old.Name, err)
		}
		if err := l.RemoveMember(ctx, old.Name, RemoveOptions{EtcdFirst: true}); err != nil {
			return fmt.Errorf("roll: removing %s: %w", old.Name, err)
		}
		l.logf("lab: roll: %s replaced by %s", old.Name, added.Name)
		if step != nil {
			step(added, old)
		}
	}
	return nil
}

func (l *Lab) memberNames() []string {
	var out []string
	for _, m := range l.Members() {
		out = append(out, m.Name)
	}
	return out
}

func (l *Lab) checkUp() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.down {
		return fmt.Errorf("the lab in %s is down", l.o.Dir)
	}
	return nil
}
