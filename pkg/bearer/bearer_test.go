package bearer

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// servingCert returns a self-signed serving certificate for 127.0.0.1 with CommonName cn, and its PEM.
func servingCert(t *testing.T, cn string) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// newTestServer starts a TLS server on 127.0.0.1 whose certificate names cn and which answers
// SelfSubjectReviews: 201 for the bearer token "good", the apiserver's 401 Status otherwise.
func newTestServer(t *testing.T, cn string) (*httptest.Server, []byte) {
	t.Helper()
	cert, caPEM := servingCert(t, cn)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != selfSubjectReviewPath {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer good" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`))
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"kind":"SelfSubjectReview","status":{"userInfo":{"username":"system:serviceaccount:t:default"}}}`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, caPEM
}

func TestPresent(t *testing.T) {
	srv, caPEM := newTestServer(t, "apiserver-2")
	c, err := Client(caPEM, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, token string
		want        Presented
	}{
		{"accepted", "good", Presented{Status: 201, ServedBy: "apiserver-2", User: "system:serviceaccount:t:default"}},
		{"rejected", "aaa.bbb.ccc", Presented{Status: 401, ServedBy: "apiserver-2", Reason: "Unauthorized", Message: "Unauthorized"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Present(context.Background(), c, srv.URL, tt.token)
			got.Duration = ""
			if got != tt.want {
				t.Errorf("Present = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPresentNoResponse(t *testing.T) {
	srv, caPEM := newTestServer(t, "apiserver-1")
	url := srv.URL
	srv.Close()
	c, err := Client(caPEM, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := Present(context.Background(), c, url, "aaa.bbb.secretsignature")
	if got.Status != 0 || got.ServedBy != "" || got.Error == "" || strings.Contains(got.Error, "secretsignature") {
		t.Errorf("Present to a closed server = %+v", got)
	}
}

func TestClientRejectsNoCA(t *testing.T) {
	if _, err := Client([]byte("not PEM"), time.Second); err == nil {
		t.Error("Client accepted a CA bundle with no certificate")
	}
}

func TestStatusReason(t *testing.T) {
	tests := []struct{ body, reason, message string }{
		{`{"kind":"Status","message":"Unauthorized","reason":"Unauthorized","code":401}`, "Unauthorized", "Unauthorized"},
		{`{"kind":"Status","message":"forbidden: x","reason":"Forbidden"}`, "Forbidden", "forbidden: x"},
		{"plain text\n", "", "plain text"},
		{strings.Repeat("x", 300), "", strings.Repeat("x", 200) + "..."},
	}
	for _, tt := range tests {
		r, m := StatusReason([]byte(tt.body))
		if r != tt.reason || m != tt.message {
			t.Errorf("StatusReason(%.30q) = %q, %q; want %q, %q", tt.body, r, m, tt.reason, tt.message)
		}
	}
}

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"aaa.bbb.ccc", "aaa.bbb.<signature dropped>"},
		{"opaquetokenvalue", "opaqueto..."},
		{"short", "<token>"},
	}
	for _, tt := range tests {
		if got := Printable(tt.in); got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
