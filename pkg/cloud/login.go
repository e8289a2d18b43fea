// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/limits"
	"github.com/credwatch/credwatch/pkg/redact"
)

// Verdict is the outcome of testing one credential against its provider.
type Verdict string

// Verdicts.
const (
	Valid       Verdict = "valid"       // the provider accepted the login
	Rejected    Verdict = "rejected"    // the provider refused it (vSphere InvalidLogin, Keystone 401)
	Unreachable Verdict = "unreachable" // no answer, TLS failure or an unexpected error: nothing is known
	NotTested   Verdict = "not-tested"  // --no-login, rate limit, or nothing to test with
)

// TestResult is what one login attempt said.
type TestResult struct {
	Verdict Verdict `json:"verdict"`
	// Fault is the provider's own error class: "InvalidLogin", "HTTP 401", "x509", "timeout".
	Fault string `json:"fault,omitempty"`
	// Detail is the provider's message (never containing the password), or why it was not tested.
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"-"`
	// DurationMS is Duration in milliseconds, for JSON and YAML.
	DurationMS int64 `json:"durationMs,omitempty"`
	// Session is the user the provider says the session belongs to (vSphere), for "valid".
	Session string `json:"session,omitempty"`
}

// LoginOptions bound and rate-limit live logins.
type LoginOptions struct {
	// Timeout bounds each attempt (dial, TLS, login, read, logout). Default 15 s.
	Timeout time.Duration
	// Insecure skips TLS verification per provider (--insecure-skip-tls-verify=vsphere,openstack).
	// A credential's own insecure flag is honoured too, and reported.
	Insecure map[Provider]bool
	// Interval is the minimum time between two attempts against the same server. Default 1 s.
	Interval time.Duration
	// MaxFailuresPerAccount stops testing an account after this many rejected logins in one run
	// (directory services lock accounts after a few failures). Default 1.
	MaxFailuresPerAccount int
}

// Tester runs login attempts: each distinct credential once, spaced per server, and no more than
// MaxFailuresPerAccount rejected attempts per account.
type Tester struct {
	o        LoginOptions
	mu       sync.Mutex
	last     map[string]time.Time
	failures map[string]int
	done     map[string]TestResult
	attempts int
	sleep    func(context.Context, time.Duration) error
}

// NewTester returns a Tester with defaults filled in.
func NewTester(o LoginOptions) *Tester {
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.MaxFailuresPerAccount <= 0 {
		o.MaxFailuresPerAccount = 1
	}
	return &Tester{o: o, last: map[string]time.Time{}, failures: map[string]int{}, done: map[string]TestResult{},
		sleep: sleepCtx}
}

// Attempts is how many live logins this Tester made.
func (t *Tester) Attempts() int { t.mu.Lock(); defer t.mu.Unlock(); return t.attempts }

// Policy describes the rate limit for the report.
func (t *Tester) Policy() string {
	return fmt.Sprintf("each distinct credential tested once, attempts against one server %s apart, at most %d rejected login(s) per account per run (directory services lock accounts after repeated failures)",
		t.o.Interval, t.o.MaxFailuresPerAccount)
}

// Test logs in with c and logs out again. It never returns an error: every outcome is a verdict.
func (t *Tester) Test(ctx context.Context, c Credential) TestResult {
	if !c.PasswordSet {
		return TestResult{Verdict: NotTested, Detail: "no password here to test (" + c.Source.String() + ")"}
	}
	if c.Server == "" {
		return TestResult{Verdict: NotTested, Detail: "no server or auth URL"}
	}
	key := string(c.Provider) + "\x00" + c.Account() + "\x00" + c.Password()
	acct := string(c.Provider) + "\x00" + c.Account()
	t.mu.Lock()
	if r, ok := t.done[key]; ok {
		t.mu.Unlock()
		return r
	}
	if t.failures[acct] >= t.o.MaxFailuresPerAccount {
		t.mu.Unlock()
		return TestResult{Verdict: NotTested, Detail: fmt.Sprintf("not tested: %s already had %d rejected login(s) in this run; another could lock the account",
			c.Account(), t.failures[acct])}
	}
	wait := time.Until(t.last[c.Server].Add(t.o.Interval))
	t.last[c.Server] = time.Now().Add(max(wait, 0))
	t.attempts++
	t.mu.Unlock()
	if wait > 0 {
		if err := t.sleep(ctx, wait); err != nil {
			return TestResult{Verdict: NotTested, Detail: "interrupted: " + err.Error()}
		}
	}
	actx, cancel := context.WithTimeout(ctx, t.o.Timeout)
	defer cancel()
	start := time.Now()
	var r TestResult
	switch c.Provider {
	case VSphere:
		r = t.testVSphere(actx, c)
	case OpenStack:
		r = t.testKeystone(actx, c)
	default:
		r = TestResult{Verdict: NotTested, Detail: "unknown provider " + string(c.Provider)}
	}
	r.Duration = time.Since(start).Round(time.Millisecond)
	r.DurationMS = r.Duration.Milliseconds()
	if r.Verdict == Unreachable && actx.Err() != nil && ctx.Err() == nil && r.Fault == "" {
		r.Fault = "timeout"
	}
	r.Detail = redact.Secret(r.Detail, c.Password())
	t.mu.Lock()
	t.done[key] = r
	if r.Verdict == Rejected {
		t.failures[acct]++
	}
	t.mu.Unlock()
	return r
}

func (t *Tester) insecure(c Credential) bool { return c.Insecure || t.o.Insecure[c.Provider] }

// tlsConfig verifies against the system roots plus the credential's ca-file, unless insecure.
func (t *Tester) tlsConfig(c Credential) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.insecure(c) {
		cfg.InsecureSkipVerify = true //nolint:gosec // the user asked for it, and the report says so
		return cfg, nil
	}
	if c.CAFile != "" {
		pem, err := limits.ReadFile(c.CAFile, limits.File)
		if err != nil {
			return nil, fmt.Errorf("read ca-file %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca-file %s: no PEM certificates", c.CAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// classifyTransport turns a failure before the provider answered into an Unreachable verdict.
func classifyTransport(err error, server string) TestResult {
	r := TestResult{Verdict: Unreachable, Detail: err.Error()}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci), strings.Contains(err.Error(), "x509:"):
		r.Fault = "x509"
		r.Detail = fmt.Sprintf("TLS certificate of %s not trusted: %v (set the config's ca-file, or --insecure-skip-tls-verify for this provider)", server, err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		r.Fault = "timeout"
	case errors.As(err, &oe):
		r.Fault = "network"
	}
	return r
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

func httpClient(tc *tls.Config, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: limits.Transport(&http.Transport{
		TLSClientConfig: tc, DisableKeepAlives: true, Proxy: http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
		TLSHandshakeTimeout: timeout, ResponseHeaderTimeout: timeout,
	}, limits.Response, 0)}
}
