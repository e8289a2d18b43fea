// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package bearer

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/bearer/bearertest"
)

func TestPresent(t *testing.T) {
	srv, caPEM := bearertest.NewServer(t, "apiserver-2")
	c, err := Client(caPEM, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, token string
		want        Presented
	}{
		{"accepted", bearertest.GoodToken, Presented{Status: 201, ServedBy: "apiserver-2", User: "system:serviceaccount:t:default"}},
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
	srv, caPEM := bearertest.NewServer(t, "apiserver-1")
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

func TestPath(t *testing.T) {
	if selfSubjectReviewPath != bearertest.SelfSubjectReviewPath {
		t.Errorf("bearertest serves %s, Present posts to %s", bearertest.SelfSubjectReviewPath, selfSubjectReviewPath)
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

func TestServedBy(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp *http.Response
		want string
	}{
		{"no response", nil, ""},
		{"plain http", &http.Response{}, ""},
		{"lab member", served("apiserver-2", "apiserver-2", "kubernetes"), "apiserver-2"},
		{"kubeadm member", served("kube-apiserver", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local", "w1-control-plane-74ph5"), "w1-control-plane-74ph5"},
		{"kubeadm, node name first", served("kube-apiserver", "w1-control-plane-74ph5", "kubernetes"), "w1-control-plane-74ph5"},
		{"kubeadm-like without a node name", served("kube-apiserver", "kubernetes", "localhost"), "kube-apiserver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ServedBy(tc.resp); got != tc.want {
				t.Errorf("ServedBy = %q, want %q", got, tc.want)
			}
		})
	}
}

func served(cn string, dns ...string) *http.Response {
	c := &x509.Certificate{Subject: pkix.Name{CommonName: cn}, DNSNames: dns}
	return &http.Response{TLS: &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}}}
}
