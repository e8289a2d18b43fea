// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"net"
	"net/http"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
)

// conns are the HTTP clients of one Fetch when MembersConfig.FreshConnections is set: each has its own
// transport (not client-go's shared one), and all their connections are closed when the fetch
// ends, so a connection wedged on a member that hung is never reused.
type conns struct {
	fresh bool
	mu    sync.Mutex
	hcs   []*http.Client
}

// client returns the HTTP client for cfg, fresh when asked for.
func (cn *conns) client(cfg *rest.Config, timeout time.Duration) (*http.Client, error) {
	if cn.fresh {
		cfg.Dial = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	if cn.fresh {
		cn.mu.Lock()
		cn.hcs = append(cn.hcs, hc)
		cn.mu.Unlock()
	}
	return hc, nil
}

// close closes the fresh clients' connections.
func (cn *conns) close() {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	for _, hc := range cn.hcs {
		utilnet.CloseIdleConnectionsFor(hc.Transport)
	}
	cn.hcs = nil
}
