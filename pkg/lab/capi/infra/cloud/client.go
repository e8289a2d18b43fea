// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
)

// ClientOptions configures a Client.
type ClientOptions struct {
	// URL is the server's (Server.URL); required.
	URL string
	// Token is the bearer token; required.
	Token string
	// CA is the PEM of the CA that issued an https server's certificate; default the system's
	// roots.
	CA []byte
	// Timeout bounds each call but a host's creation and deletion; default 30 s.
	Timeout time.Duration
	// HostTimeout bounds a host's creation and deletion, which wait for the host; default 10
	// minutes.
	HostTimeout time.Duration
}

// Client is a controller.Cloud served by a Server.
type Client struct {
	o    ClientOptions
	http *http.Client
}

var _ controller.Cloud = (*Client)(nil)

// NewClient checks o and returns a Client.
func NewClient(o ClientOptions) (*Client, error) {
	if o.URL == "" || o.Token == "" {
		return nil, errors.New("lab cloud client: a URL and a token are required")
	}
	o.URL = strings.TrimSuffix(o.URL, "/")
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.HostTimeout <= 0 {
		o.HostTimeout = 10 * time.Minute
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // the lab network is reached directly
	if len(o.CA) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(o.CA) {
			return nil, errors.New("lab cloud client: the CA holds no PEM certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &Client{o: o, http: &http.Client{Transport: tr}}, nil
}

// CreateHost implements controller.Cloud.
func (c *Client) CreateHost(ctx context.Context, name string, bootstrap []byte, meta map[string]string) (controller.HostInfo, error) {
	var info controller.HostInfo
	err := c.call(ctx, c.o.HostTimeout, http.MethodPost, hostPath(name), createHostRequest{Bootstrap: bootstrap, Meta: meta}, &info)
	return info, err
}

// Host implements controller.Cloud.
func (c *Client) Host(ctx context.Context, name string) (controller.HostInfo, error) {
	var info controller.HostInfo
	err := c.call(ctx, c.o.Timeout, http.MethodGet, hostPath(name), nil, &info)
	return info, err
}

// DeleteHost implements controller.Cloud.
func (c *Client) DeleteHost(ctx context.Context, name string) error {
	return c.call(ctx, c.o.HostTimeout, http.MethodDelete, hostPath(name), nil, nil)
}

// EnsureBalancer implements controller.Cloud.
func (c *Client) EnsureBalancer(ctx context.Context, namespace, name string, spec infra.LabClusterSpec) (string, bool, error) {
	var resp ensureBalancerResponse
	err := c.call(ctx, c.o.Timeout, http.MethodPut, balancerPath(namespace, name), spec, &resp)
	return resp.Addr, resp.Created, err
}

// DeleteBalancer implements controller.Cloud.
func (c *Client) DeleteBalancer(ctx context.Context, namespace, name string) (bool, error) {
	var resp deleteBalancerResponse
	err := c.call(ctx, c.o.Timeout, http.MethodDelete, balancerPath(namespace, name), nil, &resp)
	return resp.Deleted, err
}

// Register implements controller.Cloud.
func (c *Client) Register(ctx context.Context, namespace, name, host, addr string) error {
	return c.call(ctx, c.o.Timeout, http.MethodPut, memberPath(namespace, name, host), registerRequest{Addr: addr}, nil)
}

// Deregister implements controller.Cloud.
func (c *Client) Deregister(ctx context.Context, host string) error {
	return c.call(ctx, c.o.Timeout, http.MethodDelete, membershipPath(host), nil, nil)
}

// call sends method path with body as JSON (nil: none) within timeout and decodes the answer
// into out (nil: none expected).
func (c *Client) call(ctx context.Context, timeout time.Duration, method, path string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("lab cloud: %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.o.URL+path, rd)
	if err != nil {
		return fmt.Errorf("lab cloud: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.o.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("lab cloud: %s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("lab cloud: %s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var e errorResponse
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = oneLine(strings.TrimSpace(string(data)))
		}
		return fmt.Errorf("lab cloud: %s %s: %s: %s", method, path, resp.Status, e.Error)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("lab cloud: %s %s: the answer: %w", method, path, err)
	}
	return nil
}
