// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package workload is the tenant program the lab runs in its pods (hack/labimages/tenant): it
// reads the projected service-account token the kubelet wrote — again before every call, because
// the kubelet replaces it at 80 % of its lifetime — and presents it to the API through the
// kubernetes Service in a loop, writing one JSON line per call to stdout (when, the HTTP status,
// which member served it, the reason of a 401) and a cumulative summary line at a fixed period and
// on exit. The lab reads these lines back from the pod logs with ParseLine.
//
// It uses the standard library and pkg/bearer only, so the image stays a few megabytes.
package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/bearer"
)

// Where the kubelet mounts a pod's projected service-account volume.
const (
	DefaultTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	DefaultCAFile    = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
)

// Config is what one workload process does.
type Config struct {
	TokenFile string        // default DefaultTokenFile
	CAFile    string        // default DefaultCAFile
	URL       string        // default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
	Pod       string        // the name on every line; default $HOSTNAME (the pod name)
	Interval  time.Duration // between calls; default 1 s
	Timeout   time.Duration // per call; default 5 s
	Summary   time.Duration // between summary lines; default 30 s
	Calls     int           // stop after this many calls; 0 = until ctx ends
}

// Complete fills in the defaults, reading the environment through getenv.
func (c *Config) Complete(getenv func(string) string) error {
	if c.TokenFile == "" {
		c.TokenFile = DefaultTokenFile
	}
	if c.CAFile == "" {
		c.CAFile = DefaultCAFile
	}
	if c.URL == "" {
		host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
		if host == "" || port == "" {
			return fmt.Errorf("no API URL: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not in a pod?) and --url was not given")
		}
		c.URL = "https://" + net.JoinHostPort(host, port)
	}
	if c.Pod == "" {
		c.Pod = getenv("HOSTNAME")
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Second
	}
	if c.Summary == 0 {
		c.Summary = 30 * time.Second
	}
	return c.Validate()
}

// Validate rejects a configuration Run cannot use.
func (c *Config) Validate() error {
	if !strings.HasPrefix(c.URL, "https://") {
		return fmt.Errorf("API URL %q: want https://", c.URL)
	}
	if c.Interval <= 0 || c.Timeout <= 0 || c.Summary <= 0 {
		return fmt.Errorf("interval, timeout and summary period must be positive (got %s, %s, %s)", c.Interval, c.Timeout, c.Summary)
	}
	if c.Calls < 0 {
		return fmt.Errorf("calls %d: want 0 (no limit) or more", c.Calls)
	}
	return nil
}

// Run calls the API until ctx ends (then it returns nil) or Calls calls were made, writing the
// lines to out. It fails only when the CA cannot be read or out cannot be written.
func Run(ctx context.Context, c Config, out io.Writer) error {
	caPEM, err := os.ReadFile(c.CAFile)
	if err != nil {
		return fmt.Errorf("cluster CA: %w", err)
	}
	client, err := bearer.Client(caPEM, c.Timeout)
	if err != nil {
		return fmt.Errorf("cluster CA %s: %w", c.CAFile, err)
	}
	enc := json.NewEncoder(out)
	sum := newSummary(c.Pod, time.Now())
	tick := time.NewTicker(c.Interval)
	defer tick.Stop()
	nextSummary := time.Now().Add(c.Summary)
	for n := 0; c.Calls == 0 || n < c.Calls; n++ {
		line := call(ctx, client, c)
		if ctx.Err() != nil {
			break // the call was cut short by the shutdown: not an answer from the API
		}
		sum.add(line)
		if err := enc.Encode(line); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		if now := time.Now(); !now.Before(nextSummary) {
			if err := enc.Encode(sum.at(now)); err != nil {
				return fmt.Errorf("write report: %w", err)
			}
			nextSummary = now.Add(c.Summary)
		}
		if c.Calls != 0 && n+1 == c.Calls {
			break
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err := enc.Encode(sum.at(time.Now())); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// call reads the token and presents it once.
func call(ctx context.Context, client *http.Client, c Config) Call {
	line := Call{Type: TypeCall, Pod: c.Pod}
	raw, err := os.ReadFile(c.TokenFile)
	if err != nil {
		line.Time, line.TokenError = time.Now().UTC(), err.Error()
		return line
	}
	tok := strings.TrimSpace(string(raw))
	line.Token = claimsOf(tok)
	line.Presented = bearer.Present(ctx, client, c.URL, tok)
	line.Time = time.Now().UTC()
	return line
}
