// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lb

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
)

// HealthCheck names the checks cloud load balancers run on an apiserver backend.
type HealthCheck string

const (
	// CheckTCP passes when a TCP connection opens (an NLB's TCP check).
	CheckTCP HealthCheck = "tcp"
	// CheckTLS passes when a TLS handshake completes (the classic ELB's SSL check that the first
	// field report's team had): an apiserver whose etcd is gone still passes it.
	CheckTLS HealthCheck = "tls"
	// CheckHTTPSReadyz passes when GET /readyz answers 200: a member without storage fails it.
	CheckHTTPSReadyz HealthCheck = "https-readyz"
)

// HealthChecks lists the checks in the order --help shows them.
func HealthChecks() []HealthCheck { return []HealthCheck{CheckTCP, CheckTLS, CheckHTTPSReadyz} }

// NewCheck returns the Check for h; tlsConf (with the backends' CA) is used by tls and
// https-readyz, whose handshake does not present a client certificate unless tlsConf does.
func NewCheck(h HealthCheck, tlsConf *tls.Config) (Check, error) {
	var d net.Dialer
	switch h {
	case CheckTCP:
		return func(ctx context.Context, addr string) bool {
			c, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return false
			}
			_ = c.Close()
			return true
		}, nil
	case CheckTLS:
		return func(ctx context.Context, addr string) bool {
			td := tls.Dialer{NetDialer: &d, Config: tlsConf}
			c, err := td.DialContext(ctx, "tcp", addr)
			if err != nil {
				return false
			}
			_ = c.Close()
			return true
		}, nil
	case CheckHTTPSReadyz:
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf, DisableKeepAlives: true}}
		return func(ctx context.Context, addr string) bool {
			return apiserver.Readyz(ctx, client, "https://"+addr) == nil
		}, nil
	}
	return nil, fmt.Errorf("load-balancer health check %q: want %s, %s or %s", h, CheckTCP, CheckTLS, CheckHTTPSReadyz)
}
