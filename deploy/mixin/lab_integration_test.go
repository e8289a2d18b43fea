// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package mixin_test

import (
	"context"
	"crypto/tls"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/lab"
)

// probeSA is the service account the tests' client tokens belong to.
const probeSA = "mixin-probe"

// scrape reads a member's /metrics with the lab's admin credentials.
func scrape(t testing.TB, l *lab.Lab, member string) map[string]*dto.MetricFamily {
	t.Helper()
	m, ok := l.Member(member)
	if !ok {
		t.Fatalf("no member %s", member)
	}
	hc, err := rest.HTTPClientFor(l.MemberRESTConfig(member))
	if err != nil {
		t.Fatal(err)
	}
	hc.Timeout = 10 * time.Second
	resp, err := hc.Get(m.URL + "/metrics")
	if err != nil {
		t.Fatalf("GET %s/metrics: %v", m.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %s", m.URL, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("%s/metrics: %v", m.URL, err)
	}
	return fams
}

// mintToken asks member for a token of the probe service account (created when missing).
func mintToken(t testing.TB, l *lab.Lab, member string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := kubernetes.NewForConfig(l.MemberRESTConfig(member))
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: probeSA}}
	var last error
	for ctx.Err() == nil {
		if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			last = err
			time.Sleep(time.Second)
			continue
		}
		exp := int64(3600)
		tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, probeSA,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
		if err == nil {
			return tr.Status.Token
		}
		last = err
		time.Sleep(time.Second)
	}
	t.Fatalf("TokenRequest through %s: %v", member, last)
	return ""
}

// client presents bearer tokens only: it trusts the lab CA and has no client certificate, so
// that the member authenticates the token, not the admin certificate.
func client(l *lab.Lab) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: l.TLSConfig().RootCAs, MinVersion: tls.VersionTLS12}}}
}

// present sends GET /api with token to member; it returns the HTTP status (0: no answer).
func present(c *http.Client, l *lab.Lab, member, token string) int {
	m, ok := l.Member(member)
	if !ok {
		return 0
	}
	req, err := http.NewRequest(http.MethodGet, m.URL+"/api", nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// instance is the member's host:port, the instance label a Prometheus scraping it gives.
func instance(t testing.TB, l *lab.Lab, member string) string {
	t.Helper()
	m, ok := l.Member(member)
	if !ok {
		t.Fatalf("no member %s", member)
	}
	u, err := url.Parse(m.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// authnConfig writes an AuthenticationConfiguration with one JWT issuer on loopback that nothing
// serves: the member then runs its structured-authentication controller and JWT authenticator,
// whose series exist only with a configuration, and its JWKS fetch fails.
func authnConfig(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "authentication-config.yaml")
	data := `apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: https://127.0.0.1:9/mixin-test
    audiences: [mixin-test]
  claimMappings:
    username:
      claim: sub
      prefix: "mixin-test:"
`
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func labelNames(f *dto.MetricFamily) map[string]bool {
	out := map[string]bool{}
	for _, m := range f.GetMetric() {
		for _, lp := range m.GetLabel() {
			out[lp.GetName()] = true
		}
	}
	if f.GetType() == dto.MetricType_HISTOGRAM {
		out["le"] = true // the text parser folds the _bucket series' le into the histogram
	}
	return out
}

// clients stands for the clients of a round-robin load balancer: every second, each holds a token
// minted through one member, and each presents it to every member.
type clients struct {
	mu     sync.Mutex
	tokens map[string]string // member → a token minted through it
	extra  []string          // more tokens presented to every member (forged, bound, aging)
	wg     sync.WaitGroup
}

// startClients mints a token through every member of l and presents them until ctx ends.
func startClients(ctx context.Context, t testing.TB, l *lab.Lab) *clients {
	t.Helper()
	c := &clients{tokens: map[string]string{}}
	for _, m := range l.Members() {
		c.tokens[m.Name] = mintToken(t, l, m.Name)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		hc := client(l)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			members := c.members()
			c.mu.Lock()
			toks := append(slices.Collect(maps.Values(c.tokens)), c.extra...)
			c.mu.Unlock()
			for _, m := range members {
				for _, tok := range toks {
					present(hc, l, m, tok)
				}
			}
		}
	}()
	return c
}

// add makes the clients present a token minted through member too, and to it.
func (c *clients) add(member, token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tokens[member] = token
}

// addToken makes the clients present tok to every member too.
func (c *clients) addToken(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.extra = append(c.extra, tok)
}

// members are the members the clients present tokens to.
func (c *clients) members() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.tokens))
}

// wait returns once the clients stopped (after ctx ended), and every function go started.
func (c *clients) wait() { c.wg.Wait() }

// goUntil runs f in a goroutine of its own that wait waits for: f must return once the clients'
// ctx ends, so that nothing presents a credential to a lab that is being stopped.
func (c *clients) goUntil(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}
