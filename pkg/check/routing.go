// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
)

const idLBUnready = "lb-sends-to-unready"

// Routing is where the kubeconfig's server (a load balancer, or the kubernetes Service's
// ClusterIP) sent new TLS connections, told apart by each member's serving certificate. It says
// nothing when the server terminates TLS itself (its own certificate matches no member).
type Routing struct {
	Server string
	// Tried new connections; Failed of them did not finish the TLS handshake in time.
	Tried, Failed int
	// Served counts connections by the fingerprint of the certificate that answered.
	Served map[string]int
}

// routingConnections is how many new connections probe the server: twice the members, so a
// round-robin balancer reaches each member at least once even with other clients in between.
func routingConnections(members int) int { return min(max(4, 2*members), 16) }

// needsRouting tells whether to probe the server: some member that answers is not ready, and
// the server is not itself one of the members.
func needsRouting(members []Member, server string) bool {
	u, err := NormalizeEndpoint(server)
	if err != nil {
		return false
	}
	unready := false
	for _, m := range members {
		if m.URL == u {
			return false
		}
		unready = unready || m.Reachable && len(m.NotReady) > 0 && m.ServingCert != ""
	}
	return unready
}

// probeRouting opens n new TLS connections to the server at once and records which certificate
// answered each; no request is sent.
func probeRouting(ctx context.Context, c *Config, n int) *Routing {
	r := &Routing{Server: c.REST.Host, Served: map[string]int{}}
	u, err := url.Parse(c.REST.Host)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" {
		return r
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443")
	}
	tc, err := rest.TLSConfigFor(c.REST)
	if err != nil || tc == nil {
		return r
	}
	if tc.ServerName == "" {
		tc.ServerName = u.Hostname()
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			fp := handshake(ctx, addr, tc)
			mu.Lock()
			defer mu.Unlock()
			r.Tried++
			if fp == "" {
				r.Failed++
				return
			}
			r.Served[fp]++
		})
	}
	wg.Wait()
	return r
}

// handshake returns the fingerprint of the certificate that answers a new connection to addr,
// or "".
func handshake(ctx context.Context, addr string, tc *tls.Config) string {
	d := tls.Dialer{Config: tc}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return ""
	}
	defer conn.Close()
	st := conn.(*tls.Conn).ConnectionState()
	if len(st.PeerCertificates) == 0 {
		return ""
	}
	return certFingerprint(st.PeerCertificates[0])
}

func certFingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return hex.EncodeToString(sum[:])
}

// checkRouting names each member that is not ready but that the kubeconfig's server still sent
// new connections to: the clients of that server (kubelets, controllers, kubectl) are sent to a
// member that cannot serve them.
func checkRouting(s *Snapshot) []finding.Finding {
	r := s.Routing
	if r == nil || r.Tried == 0 {
		return nil
	}
	var out []finding.Finding
	for _, m := range s.Members {
		served := r.Served[m.ServingCert]
		if !m.Reachable || len(m.NotReady) == 0 || m.ServingCert == "" || served == 0 || sharedCert(s.Members, m) {
			continue
		}
		failing := strings.Join(m.NotReady, ", ")
		msg := fmt.Sprintf("the kubeconfig's server %s (a load balancer) sent %d of %d new connections to member %s, whose /readyz fails %s: its clients are sent to a member that cannot serve them",
			r.Server, served, r.Tried, m.Name, failing)
		out = append(out, finding.New(idLBUnready, msg,
			finding.Evidence{Member: m.Name, Key: "server", Value: r.Server},
			finding.Evidence{Member: m.Name, Key: "connections served", Value: fmt.Sprintf("%d of %d", served, r.Tried)},
			finding.Evidence{Member: m.Name, Key: "failing readiness checks", Value: failing}).On(m.Name, m.URL).WithSeverity(catalogue.Error))
	}
	return out
}

// sharedCert tells whether another member serves the same certificate (then a connection
// cannot be attributed).
func sharedCert(members []Member, m Member) bool {
	return slices.ContainsFunc(members, func(o Member) bool { return o.URL != m.URL && o.ServingCert == m.ServingCert })
}
