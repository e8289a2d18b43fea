// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"fmt"
	"strings"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/etcd"
	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// newEtcdCluster is the lab's etcd: members on the control-plane hosts (etcd-N beside
// apiserver-N), data and logs in the lab directory.
func (l *Lab) newEtcdCluster() (*etcd.Cluster, error) {
	bin, err := Binary(l.o.BinDir, "", "etcd")
	if err != nil {
		return nil, err
	}
	return etcd.NewCluster(etcd.Config{
		Binary: bin, DataDir: l.path("etcd"), LogDir: l.path("logs"),
		IP: l.etcdIP, Start: l.startEtcd, Wait: l.o.Wait, Grace: stopGrace, Logf: l.logf,
	}), nil
}

// startEtcd starts an etcd member on its host and records its log.
func (l *Lab) startEtcd(ctx context.Context, m *etcd.Member, bin string, args []string) (*proc.Proc, error) {
	for _, u := range []string{m.ClientURL, m.PeerURL} {
		host := strings.TrimPrefix(u, "http://")
		if _, err := l.freePort(host[:strings.LastIndex(host, ":")], 2379, m.Name); err != nil {
			return nil, err
		}
	}
	_, netns, err := l.placeOn(ctx, m.N, "")
	if err != nil {
		return nil, err
	}
	p, err := startProc(m.Name, netns, bin, args, m.LogFile)
	if err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	l.mu.Lock()
	l.logs[m.Name] = m.LogFile
	l.mu.Unlock()
	return p, nil
}
