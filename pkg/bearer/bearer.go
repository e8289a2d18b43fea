// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package bearer presents a bearer token to a kube-apiserver with nothing but net/http and reports
// the answer: the HTTP status, the member that served it (the CommonName of its serving
// certificate, read from the TLS connection state), the user it authenticated, or the reason and
// message of the Status a failure returns. It is shared by the lab's imitation tenants and the
// tenant workload that runs in the lab's pods, so it has no dependency beyond the standard library.
package bearer

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/redact"
)

// NoResponse is the member name recorded when a request got no HTTP response at all (connection
// refused, reset, timeout): there was no TLS handshake to name the member.
const NoResponse = "(no response)"

// kubeadmServingCN is the CommonName kubeadm gives every apiserver's serving certificate.
const kubeadmServingCN = "kube-apiserver"

// ServedBy names the member that answered ("" when there was no TLS response): the CommonName of
// its serving certificate, or, for kubeadm's certificates, which all share one CommonName, the
// node name among their DNS names (kubeadm's GetAPIServerAltNames: the node name, kubernetes,
// kubernetes.default…, then the certSANs; the certificate lists them sorted). A control-plane
// endpoint given as a DNS name would be among them too: the lab's is an address.
func ServedBy(resp *http.Response) string {
	if resp == nil || resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 {
		return ""
	}
	c := resp.TLS.PeerCertificates[0]
	if c.Subject.CommonName == kubeadmServingCN {
		for _, n := range c.DNSNames {
			if n != "kubernetes" && !strings.HasPrefix(n, "kubernetes.") && n != "localhost" {
				return n
			}
		}
	}
	return c.Subject.CommonName
}

// Client trusts caPEM, presents no client certificate and opens a new connection per request, so a
// load balancer or a Service spreads the requests across members.
func Client(caPEM []byte, timeout time.Duration) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("cluster CA: no PEM certificate found")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, DisableKeepAlives: true, Proxy: nil}
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

// Presented is the answer of one member to a token.
type Presented struct {
	Status   int    `json:"status"`             // HTTP status; 0 = no response
	ServedBy string `json:"servedBy"`           // CommonName of the serving certificate
	User     string `json:"user,omitempty"`     // the username the member authenticated (status 201)
	Reason   string `json:"reason,omitempty"`   // the Status reason of a failure ("Unauthorized")
	Message  string `json:"message,omitempty"`  // the Status message of a failure ("Unauthorized")
	Error    string `json:"error,omitempty"`    // transport error
	Duration string `json:"duration,omitempty"` // how long the member took to answer
}

const selfSubjectReviewPath = "/apis/authentication.k8s.io/v1/selfsubjectreviews"

var selfSubjectReviewBody = []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)

// Present sends a SelfSubjectReview with token as bearer to baseURL (a member, a load balancer or
// the kubernetes Service) through c. Any authenticated user may create a SelfSubjectReview, so 201
// means the token was accepted and 401 that it was rejected. The token never appears in the result.
func Present(ctx context.Context, c *http.Client, baseURL, token string) Presented {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(baseURL, "/")+selfSubjectReviewPath, bytes.NewReader(selfSubjectReviewBody))
	if err != nil {
		return Presented{Error: Redact(err.Error(), token)}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return Presented{Error: Redact(err.Error(), token), Duration: time.Since(start).Round(time.Millisecond).String()}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	p := Presented{Status: resp.StatusCode, ServedBy: ServedBy(resp), Duration: time.Since(start).Round(time.Millisecond).String()}
	if resp.StatusCode == http.StatusCreated || resp.StatusCode == http.StatusOK {
		var ssr struct {
			Status struct {
				UserInfo struct {
					Username string `json:"username"`
				} `json:"userInfo"`
			} `json:"status"`
		}
		if json.Unmarshal(data, &ssr) == nil {
			p.User = ssr.Status.UserInfo.Username
		}
	} else {
		p.Reason, p.Message = StatusReason(data)
	}
	return p
}

// StatusReason extracts the reason and message of a metav1.Status body; any other body gives no
// reason and its start as the message.
func StatusReason(data []byte) (reason, message string) {
	var st struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &st) == nil && (st.Message != "" || st.Reason != "") {
		return st.Reason, st.Message
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return "", s
}

// Printable drops the signature part of a JWT (tokens are never printed whole).
func Printable(tok string) string {
	if i := strings.LastIndexByte(tok, '.'); i > 0 {
		return tok[:i] + ".<signature dropped>"
	}
	if len(tok) > 8 {
		return tok[:8] + "..."
	}
	return "<token>"
}

// Redact takes token out of s, in any spelling, and the signature of any other token.
func Redact(s, token string) string {
	return redact.Secret(redact.Tokens(s), token)
}
