// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab_test

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

func clientset(t *testing.T, l *lab.Lab, member string) kubernetes.Interface {
	t.Helper()
	cfg := l.RESTConfig()
	if member != "" {
		cfg = l.MemberRESTConfig(member)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return c
}

// mint asks member for a token of the default service account in namespace default.
func mint(t *testing.T, l *lab.Lab, member string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := clientset(t, l, member)
	var tr *authenticationv1.TokenRequest
	var err error
	for i := 0; i < 20; i++ { // the default service account appears shortly after the namespace
		tr, err = c.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))},
		}, metav1.CreateOptions{})
		if err == nil {
			return tr.Status.Token
		}
		_, _ = c.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("TokenRequest through %s: %v", member, err)
	return ""
}

func ptr[T any](v T) *T { return &v }

// present calls GET /api with token on member and returns the HTTP status.
func present(t *testing.T, l *lab.Lab, member, token string) int {
	t.Helper()
	m, ok := l.Member(member)
	if !ok {
		t.Fatalf("no member %s", member)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: l.TLSConfig().RootCAs, MinVersion: tls.VersionTLS12}, DisableKeepAlives: true}}
	req, _ := http.NewRequest(http.MethodGet, m.URL+"/api", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s/api: %v", m.URL, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func tokenKID(t *testing.T, token string) string {
	t.Helper()
	h, _, _ := strings.Cut(token, ".")
	data, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		t.Fatalf("token header: %v", err)
	}
	var hdr struct {
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(data, &hdr); err != nil {
		t.Fatalf("token header: %v", err)
	}
	return hdr.Kid
}

func TestIntegrationLabNewLine(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 3, WithControllerManager: true})
	ctx := context.Background()

	t.Run("members ready and identified by serving certificate", func(t *testing.T) {
		seen := map[string]bool{}
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: l.TLSConfig(), DisableKeepAlives: true}}
		for i := 0; i < 6; i++ {
			resp, err := c.Get("https://" + l.LBAddress() + "/readyz")
			if err != nil {
				t.Fatalf("GET /readyz via LB: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("/readyz via LB: HTTP %d", resp.StatusCode)
			}
			seen[resp.TLS.PeerCertificates[0].Subject.CommonName] = true
		}
		if len(seen) != 3 {
			t.Errorf("LB round-robin reached %v, want 3 members", seen)
		}
	})

	t.Run("kid of sa.pub equals the real apiserver's", func(t *testing.T) {
		ks, err := keys.LoadPEMFile(t.Context(), l.SharedSAPubFile())
		if err != nil || len(ks) != 1 {
			t.Fatalf("keys.LoadPEMFile: %v (%d keys)", err, len(ks))
		}
		want, err := keys.KeyID(ks[0].Public)
		if err != nil {
			t.Fatal(err)
		}
		token := mint(t, l, "apiserver-1")
		if got := tokenKID(t, token); got != want {
			t.Errorf("kid in minted token = %q, want %q", got, want)
		}
		raw, err := clientset(t, l, "apiserver-2").CoreV1().RESTClient().Get().AbsPath("/openid/v1/jwks").DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET /openid/v1/jwks: %v", err)
		}
		if !strings.Contains(string(raw), `"kid":"`+want+`"`) {
			t.Errorf("/openid/v1/jwks = %s, want kid %s", raw, want)
		}
	})

	t.Run("controller manager turns a Deployment into a ReplicaSet and Pods", func(t *testing.T) {
		testDeployment(t, l)
	})

	t.Run("a member with a new SA key rejects tokens minted elsewhere", func(t *testing.T) {
		m, err := l.AddMember(ctx, lab.MemberOptions{SAKey: lab.SAKeyNew})
		if err != nil {
			t.Fatalf("AddMember: %v", err)
		}
		token := mint(t, l, m.Name)
		if code := present(t, l, "apiserver-1", token); code != http.StatusUnauthorized {
			t.Errorf("token minted by %s presented to apiserver-1: HTTP %d, want 401", m.Name, code)
		}
		if code := present(t, l, m.Name, token); code != http.StatusOK {
			t.Errorf("token minted by %s presented to itself: HTTP %d, want 200", m.Name, code)
		}
		lines, err := l.AuthLines("apiserver-1")
		if err != nil || len(lines) == 0 || !strings.Contains(strings.Join(lines, "\n"), "invalid signature, no keys found") {
			t.Errorf("apiserver-1 auth lines = %q (%v), want invalid signature, no keys found", lines, err)
		}
		if err := l.RemoveMember(ctx, m.Name, lab.RemoveOptions{}); err != nil {
			t.Fatalf("RemoveMember: %v", err)
		}
	})

	t.Run("roll keeps the load balancer serving", func(t *testing.T) {
		var ok, failed atomic.Int64
		var lastErr atomic.Value
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clientset(t, l, "")
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
				}
				rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				_, err := c.CoreV1().Namespaces().Get(rctx, "default", metav1.GetOptions{})
				cancel()
				if err != nil {
					failed.Add(1)
					lastErr.Store(err.Error())
				} else {
					ok.Add(1)
				}
			}
		}()
		steps := 0
		err := l.Roll(ctx, lab.MemberOptions{}, func(added, removed lab.Member) {
			steps++
			rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			// A fresh client: keep-alive connections may still be pinned to the removed member.
			if _, err := clientset(t, l, "").CoreV1().Namespaces().Get(rctx, "default", metav1.GetOptions{}); err != nil {
				t.Errorf("after replacing %s by %s the load balancer does not serve: %v", removed.Name, added.Name, err)
			}
		})
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatalf("Roll: %v", err)
		}
		t.Logf("roll: %d steps, %d requests ok, %d failed (last error %v)", steps, ok.Load(), failed.Load(), lastErr.Load())
		if steps != 3 || len(l.Members()) != 3 {
			t.Errorf("roll: %d steps, members %v", steps, l.Members())
		}
		// Requests pinned to a member whose etcd member was just removed time out (as in the
		// field); the load balancer must keep serving the rest.
		if ok.Load() == 0 || failed.Load() > ok.Load()/4 {
			t.Errorf("load balancer during roll: %d ok, %d failed (last: %v)", ok.Load(), failed.Load(), lastErr.Load())
		}
	})

	t.Run("no lab process left after Down", func(t *testing.T) {
		if err := l.Down(ctx); err != nil {
			t.Fatalf("Down: %v", err)
		}
		if kids := children(t); len(kids) > 0 {
			t.Errorf("processes left after Down: %v", kids)
		}
	})
}

func TestIntegrationLabOldLine(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 3, Version: lab.OldVersion})
	info, err := clientset(t, l, "").Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if info.GitVersion != lab.OldVersion {
		t.Errorf("server version %s, want %s", info.GitVersion, lab.OldVersion)
	}
	for _, m := range l.Status(context.Background(), true).Members {
		if !m.Ready {
			t.Errorf("%s not ready: %s", m.Name, m.Health)
		}
	}
}

// children lists the processes whose parent is this test process.
func children(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == me {
			out = append(out, fmt.Sprintf("%s %s", e.Name(), s[:i+1]))
		}
	}
	return out
}
