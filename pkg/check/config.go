// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// DefaultServerName is the name every member's serving certificate carries; members are dialled
// by address and verified against the cluster CA under this name.
const DefaultServerName = "kubernetes.default.svc"

// DefaultProbeNamespace and DefaultProbeName name the probe service account.
const (
	DefaultProbeNamespace = "credwatch"
	DefaultProbeName      = "credwatch-probe"
)

// ProbeTokenSeconds is the probe token's lifetime: the minimum TokenRequest allows.
const ProbeTokenSeconds = 600

// Config says what to check and how.
type Config struct {
	// REST reaches the cluster endpoint (usually a load balancer) with the user's credentials.
	REST *rest.Config
	// Endpoints are member URLs named by hand, added to the discovered ones.
	Endpoints []string
	// ServerName verifies members' serving certificates (default kubernetes.default.svc).
	ServerName string
	// ProbeNamespace/ProbeName name the service account whose tokens are minted.
	ProbeNamespace, ProbeName string
	// CreateProbeSA creates the probe service account (and its namespace) when missing.
	CreateProbeSA bool
	// Tokens are tokens the user hands in, each reviewed by every member.
	Tokens []NamedToken
	// PublicIssuerCA is extra PEM roots for fetching a public issuer's documents.
	PublicIssuerCA []byte
	// ClusterAPI is the checked cluster's Cluster API Machines, read by the caller from the
	// management cluster: each member is related to the Machine it runs on.
	ClusterAPI *ClusterAPI
	// ClusterAPIRead, when set, gives ClusterAPI instead, once the members have been asked: the
	// caller reads the management cluster meanwhile, so that a read that hangs (a management
	// cluster that is the cluster being rolled) does not eat the time the members are asked in.
	ClusterAPIRead func() *ClusterAPI
	// Cloud says whether to look at the cloud-provider credentials, and whether to log in.
	Cloud CloudConfig
	// Inventory is how the big lists are read (default ReadCache: from the watch cache).
	Inventory InventoryRead
	// Timeout bounds every call (default 10 s).
	Timeout time.Duration
	// Parallel bounds concurrent calls (default 8).
	Parallel int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// NamedToken is a token and where it came from (a file path); the token is never printed.
type NamedToken struct {
	Name  string
	Token string
}

func (c *Config) defaults() error {
	if c.REST == nil {
		return fmt.Errorf("check: no client configuration")
	}
	if c.ServerName == "" {
		c.ServerName = DefaultServerName
	}
	if c.ProbeNamespace == "" {
		c.ProbeNamespace = DefaultProbeNamespace
	}
	if c.ProbeName == "" {
		c.ProbeName = DefaultProbeName
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Parallel <= 0 {
		c.Parallel = 8
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	for _, e := range c.Endpoints {
		if _, err := NormalizeEndpoint(e); err != nil {
			return err
		}
	}
	return nil
}

// NormalizeEndpoint turns "10.0.0.1", "10.0.0.1:6443" or "https://10.0.0.1:6443/" into
// "https://10.0.0.1:6443".
func NormalizeEndpoint(s string) (string, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return "", fmt.Errorf("endpoint %q: empty", s)
	}
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("endpoint %q: %w", s, err)
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("endpoint %q: want an https URL", s)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("endpoint %q: no host", s)
	}
	host := u.Host
	switch port := u.Port(); {
	case port == "" && strings.HasSuffix(host, ":"):
		return "", fmt.Errorf("endpoint %q: empty port", s)
	case port == "":
		host += ":6443"
	default:
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("endpoint %q: port %s: want 1 to 65535", s, port)
		}
	}
	return "https://" + host, nil
}
