// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/credwatch/credwatch/pkg/limits"
	"github.com/credwatch/credwatch/pkg/report"
)

func systemPoolWith(extraCA []byte) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(extraCA) {
		return nil, errors.New("public issuer CA bundle: no PEM certificates found")
	}
	return pool, nil
}

// clusterServed reports whether an issuer URL names the cluster itself (the in-cluster service
// name, a member, or the kubeconfig server), rather than a public place (bucket, CDN) that must
// publish the keys itself.
func clusterServed(issuer string, members []Member, server string) bool {
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme != "https" {
		return true // not a discovery URL at all; nothing to fetch
	}
	h := u.Hostname()
	if h == "kubernetes" || h == "kubernetes.default" || strings.HasPrefix(h, "kubernetes.default.svc") {
		return true
	}
	hostOf := func(s string) string {
		if v, err := url.Parse(s); err == nil {
			return v.Hostname()
		}
		return ""
	}
	if h == hostOf(server) {
		return true
	}
	for _, m := range members {
		if h == hostOf(m.URL) {
			return true
		}
	}
	return false
}

// fetchPublic fetches an issuer's discovery document and JWKS from the issuer URL itself.
func fetchPublic(ctx context.Context, c *Config, issuer string) *PublicIssuer {
	p := &PublicIssuer{Issuer: issuer, DiscoveryURL: strings.TrimRight(issuer, "/") + "/.well-known/openid-configuration"}
	tlsCfg, err := tlsConfigFor(c.PublicIssuerCA)
	if err != nil {
		p.Error = report.Plain(err.Error())
		return p
	}
	client := &http.Client{Timeout: c.Timeout, Transport: &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment}}
	defer client.CloseIdleConnections()
	raw, err := httpGet(ctx, client, p.DiscoveryURL)
	if err != nil {
		p.Error = report.Plain(err.Error())
		return p
	}
	var d Discovery
	if err := json.Unmarshal(raw, &d); err != nil {
		p.Error = report.Plain(fmt.Sprintf("decode %s: %v", p.DiscoveryURL, err))
		return p
	}
	p.Discovery = &d
	if d.JWKSURI == "" {
		p.Error = report.Plain(fmt.Sprintf("%s has no jwks_uri", p.DiscoveryURL))
		return p
	}
	p.JWKSURL = d.JWKSURI
	raw, err = httpGet(ctx, client, d.JWKSURI)
	if err != nil {
		p.Error = report.Plain(err.Error())
		return p
	}
	keys, err := parseJWKS(raw)
	if err != nil {
		p.Error = report.Plain(fmt.Sprintf("%s: %v", d.JWKSURI, err))
		return p
	}
	p.JWKS = keys
	return p
}

// publicMax bounds a public issuer's discovery document and JWKS.
const publicMax = 4 << 20

func httpGet(ctx context.Context, client *http.Client, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, publicMax+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > publicMax {
		return nil, &limits.TooLargeError{Name: req.URL.Host + req.URL.Path, Max: publicMax, Response: true}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	return body, nil
}
