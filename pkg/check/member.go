// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	authv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/kubever"
	"github.com/credwatch/credwatch/pkg/limits"
	"github.com/credwatch/credwatch/pkg/report"
)

// memberClient talks to one member directly, verifying its certificate against the cluster CA
// under the cluster's service name, and remembers which certificate served it.
type memberClient struct {
	cfg      *rest.Config // the member's connection, with credwatch's credentials
	cs       kubernetes.Interface
	rc       rest.Interface
	servedMu sync.Mutex
	served   string
	cert     string // SHA-256 of the serving certificate
	jwksCC   string // Cache-Control of the last JWKS answer
}

type cnRecorder struct {
	rt http.RoundTripper
	mc *memberClient
}

func (r cnRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.rt.RoundTrip(req)
	if err == nil && resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		r.mc.servedMu.Lock()
		r.mc.served = resp.TLS.PeerCertificates[0].Subject.CommonName
		r.mc.cert = certFingerprint(resp.TLS.PeerCertificates[0])
		if req.URL.Path == jwksPath {
			r.mc.jwksCC = resp.Header.Get("Cache-Control")
		}
		r.mc.servedMu.Unlock()
	}
	return resp, err
}

// jwksPath is where a member publishes its service-account keys.
const jwksPath = "/openid/v1/jwks"

// maxAge is the max-age directive of a Cache-Control value (nil: none).
func maxAge(cc string) *int {
	for d := range strings.SplitSeq(cc, ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(d), "max-age=")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return &n
		}
	}
	return nil
}

// WrappedRoundTripper lets client-go reach the inner transport (to cancel requests).
func (r cnRecorder) WrappedRoundTripper() http.RoundTripper { return r.rt }

func newMemberClient(base *rest.Config, memberURL string, c *Config, cn *conns) (*memberClient, error) {
	cfg := rest.CopyConfig(base)
	cfg.Host = memberURL
	cfg.APIPath = ""
	cfg.TLSClientConfig.ServerName = c.ServerName
	cfg.Timeout = c.Timeout
	cfg.QPS, cfg.Burst = 200, 400
	mc := &memberClient{cfg: cfg}
	prev := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if prev != nil {
			rt = prev(rt)
		}
		return cnRecorder{rt: rt, mc: mc}
	}
	hc, err := cn.client(cfg, c.Timeout)
	if err != nil {
		return nil, fmt.Errorf("client for member %s: %w", memberURL, err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("client for member %s: %w", memberURL, err)
	}
	mc.cs, mc.rc = cs, cs.CoreV1().RESTClient()
	return mc, nil
}

func (mc *memberClient) servedBy() (cn, cert string) {
	mc.servedMu.Lock()
	defer mc.servedMu.Unlock()
	return mc.served, mc.cert
}

func (mc *memberClient) get(ctx context.Context, c *Config, path, accept string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req := mc.rc.Get().AbsPath(path)
	if accept != "" {
		req = req.SetHeader("Accept", accept)
	}
	raw, err := req.Do(ctx).Raw()
	if err != nil {
		return nil, describe("GET "+path, err)
	}
	return raw, nil
}

// describe names the call and, for API errors, the HTTP status, so a skip reason says
// "forbidden" rather than the bare text client-go gives non-resource URLs.
func describe(what string, err error) error {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		return fmt.Errorf("%s: HTTP %d %s: %w", what, s.Code, strings.ToLower(string(s.Reason)), err)
	}
	return fmt.Errorf("%s: %w", what, limits.Clean(err))
}

// probeMember fills m from the member's own endpoints. An unreachable member stops after the
// first call (its /version), so a hanging member costs one timeout.
func probeMember(ctx context.Context, c *Config, mc *memberClient, m *Member) {
	probeMemberScoped(ctx, c, mc, m, false)
}

// probeMemberScoped is probeMember, leaving out /metrics when skipMetrics.
func probeMemberScoped(ctx context.Context, c *Config, mc *memberClient, m *Member, skipMetrics bool) {
	raw, err := mc.get(ctx, c, "/version", "application/json")
	if err != nil {
		m.Error = report.Plain(err.Error())
		// It answered over TLS and refused who we are: its certificate still names it.
		m.rejectsUs = apierrors.IsUnauthorized(err)
		if m.rejectsUs {
			m.ServedBy, m.ServingCert = mc.servedBy()
		}
		return
	}
	m.Reachable = true
	m.ServedBy, m.ServingCert = mc.servedBy()
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if json.Unmarshal(raw, &v) == nil {
		m.Version = v.GitVersion
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		raw, err := mc.get(ctx, c, "/.well-known/openid-configuration", "application/json")
		if err != nil {
			m.DiscoveryErr = report.Plain(err.Error())
			return
		}
		var d Discovery
		if err := json.Unmarshal(raw, &d); err != nil {
			m.DiscoveryErr = report.Plain(fmt.Sprintf("decode discovery document: %v", err))
			return
		}
		m.Discovery = &d
	})
	wg.Go(func() {
		raw, err := mc.get(ctx, c, jwksPath, "application/jwk-set+json, application/json")
		if err != nil {
			m.JWKSErr = report.Plain(err.Error())
			return
		}
		keys, err := parseJWKS(raw)
		if err != nil {
			m.JWKSErr = report.Plain(err.Error())
			return
		}
		m.JWKS = keys
		mc.servedMu.Lock()
		m.JWKSMaxAge = maxAge(mc.jwksCC)
		mc.servedMu.Unlock()
	})
	wg.Go(func() { m.NotReady, m.ReadyzErr = readyz(ctx, c, mc) })
	if skipMetrics {
		wg.Wait()
		return
	}
	wg.Go(func() {
		raw, err := mc.get(ctx, c, "/metrics", "text/plain")
		if err != nil {
			m.MetricsErr = report.Plain(err.Error())
			return
		}
		mt, err := ParseMetrics(strings.NewReader(string(raw)))
		if err != nil {
			m.MetricsErr = report.Plain(err.Error())
			return
		}
		m.Metrics = mt
	})
	wg.Wait()
}

// readyz asks the member's /readyz?verbose and returns the readiness checks that fail, or why
// the answer could not be read. A failing /readyz answers HTTP 500 with the same verbose body; a
// /readyz that does not answer within the timeout (its etcd check hangs) counts as failing.
func readyz(ctx context.Context, c *Config, mc *memberClient) ([]string, string) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	// DoRaw keeps the body of an error status (Do().Raw() drops it): a failing /readyz names its checks there.
	raw, err := mc.rc.Get().AbsPath("/readyz").Param("verbose", "").SetHeader("Accept", "text/plain").DoRaw(ctx)
	failed := ParseReadyz(string(raw))
	switch {
	case len(failed) > 0:
		return failed, ""
	case err != nil && readyzTimedOut(ctx, err):
		return []string{ReadyzTimedOut}, describe("GET /readyz", err).Error()
	case err != nil && readyzUnknown(err):
		return nil, describe("GET /readyz", err).Error()
	case err != nil:
		return []string{ReadyzFailed}, describe("GET /readyz", err).Error()
	}
	return nil, ""
}

// readyzTimedOut tells whether a /readyz error means no answer in time: our deadline, the
// client's, or the member's own handler timeout (HTTP 504, which a member whose etcd check hangs
// answers a moment before our deadline because client-go passes the timeout to it).
func readyzTimedOut(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var st apierrors.APIStatus
	return errors.As(err, &st) && st.Status().Code == http.StatusGatewayTimeout
}

// readyzUnknown tells whether a /readyz error says nothing about readiness: we were not allowed
// to ask, or could not reach the member at all (reachability is judged by /version).
func readyzUnknown(err error) bool {
	if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		return true
	}
	var st apierrors.APIStatus
	return !errors.As(err, &st)
}

// ReadyzTimedOut stands in Member.NotReady for a /readyz that did not answer in time.
const ReadyzTimedOut = "(no answer within the timeout)"

// ReadyzFailed stands in Member.NotReady for a /readyz that answered an error without naming
// the failing checks (say, HTTP 503 from a member shutting down).
const ReadyzFailed = "(failed without naming a check)"

// ParseReadyz returns the names of the failing checks in a verbose /readyz or /livez body
// ("[-]etcd failed: reason withheld").
func ParseReadyz(body string) []string {
	var out []string
	for line := range strings.Lines(body) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "[-]")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		out = append(out, name)
	}
	return out
}

func parseJWKS(raw []byte) ([]JWK, error) {
	var set struct {
		Keys []JWK `json:"keys"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("decode JWKS: %w", err)
	}
	return set.Keys, nil
}

// mint asks the member for a probe token (no audiences: the member's API audiences).
func mint(ctx context.Context, c *Config, mc *memberClient) (string, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	exp := int64(ProbeTokenSeconds)
	tr, err := mc.cs.CoreV1().ServiceAccounts(c.ProbeNamespace).CreateToken(ctx, c.ProbeName,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("TokenRequest for %s/%s: %w", c.ProbeNamespace, c.ProbeName, err)
	}
	return tr.Status.Token, tr.Spec.Audiences, nil
}

// review presents token to the member; its TokenReview runs the member's own authenticator.
func review(ctx context.Context, c *Config, mc *memberClient, m *Member, token string, auds []string) Cell {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cell := Cell{Member: m.Name}
	tr, err := mc.cs.AuthenticationV1().TokenReviews().Create(ctx,
		&authv1.TokenReview{Spec: authv1.TokenReviewSpec{Token: token, Audiences: auds}}, metav1.CreateOptions{})
	if err != nil {
		cell.Cause, cell.Message = cellUnreachable, fmt.Sprintf("TokenReview: %v", err)
		return cell
	}
	if tr.Status.Authenticated {
		cell.Accepted, cell.User = true, tr.Status.User.Username
		return cell
	}
	v, _ := kubever.Parse(m.Version)
	cell.Cause = CauseOf(tr.Status.Error, v)
	cell.Message = tr.Status.Error
	if cell.Message == "" {
		cell.Message = "not authenticated, no error: no authenticator claimed the token (the API answers a bare \"invalid bearer token\")"
	}
	return cell
}

// memberName picks a stable, readable name: the static pod, the serving certificate's
// CommonName when it names the member, else host:port.
func memberName(m *Member) string {
	if n := ownName(m); n != "" {
		return n
	}
	if u, err := url.Parse(m.URL); err == nil {
		return u.Host
	}
	return m.URL
}

// ownName is the name a member gives itself — its static pod, or its serving certificate's
// CommonName when that names one member — else "".
func ownName(m *Member) string {
	if m.StaticPod != "" {
		return strings.TrimPrefix(m.StaticPod, "kube-system/")
	}
	if slices.Contains(m.FoundBy, "kubeconfig-server") {
		return "" // possibly a load balancer: the certificate names whichever member answered
	}
	switch m.ServedBy {
	case "", "kube-apiserver", "kubernetes", "apiserver", "localhost":
		return ""
	}
	return m.ServedBy
}

// tlsConfigFor builds the TLS configuration for fetching a public issuer.
func tlsConfigFor(extraCA []byte) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(extraCA) == 0 {
		return cfg, nil
	}
	pool, err := systemPoolWith(extraCA)
	if err != nil {
		return nil, err
	}
	cfg.RootCAs = pool
	return cfg, nil
}
