// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cause

import (
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

func TestRelayedError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, agg string
		cut, ok   bool
	}{
		{`lookup failed: [invalid bearer token, Token has been invalidated, unknown]`, `[invalid bearer token, Token has been invalidated, unknown]`, false, true},
		{`returns an error: [invalid bearer token, [a, b]]; Authenticator XfccAuthenticator: x`, `[invalid bearer token, [a, b]]`, false, true},
		{`returns an error: [invalid bearer token, service account token has exp`, `[invalid bearer token, service account token has exp`, true, true},
		{`invalid bearer token`, `invalid bearer token`, false, true},
		{`  invalid bearer token, service account token has been invalidated `, `[invalid bearer token, service account token has been invalidated]`, false, true},
		{`error: invalid bearer token in request`, "", false, false},
	}
	for _, tt := range tests {
		agg, cut, ok := relayedError(tt.text)
		if agg != tt.agg || cut != tt.cut || ok != tt.ok {
			t.Errorf("%q: got %q,%v,%v want %q,%v,%v", tt.text, agg, cut, ok, tt.agg, tt.cut, tt.ok)
		}
	}
}

// TestClassifyRelayed covers the roads the API server's errors take besides its own log: the
// consumer is the component, the cause the relayed part's, and a frame (%v at the end) names its
// cause whatever its inner error says.
func TestClassifyRelayed(t *testing.T) {
	t.Parallel()
	cl := NewClassifier(catalogue.Default())
	tests := []struct {
		name   string
		l      Line
		cause  string
		writer string
	}{
		{"vault", Line{Msg: `[ERROR] auth.kubernetes.auth_kubernetes_1: login unauthorized due to: lookup failed: [invalid bearer token, service account token has expired]`}, "token-expired", "vault"},
		{"istio-csr", Line{Msg: "failed to authenticate request", Logger: "grpc-server",
			Err: `failed to validate the JWT from cluster "Kubernetes": the service account authentication returns an error: [invalid bearer token, service account UID (a) does not match claim (b), unknown]`}, "serviceaccount-recreated", "istio-csr"},
		{"claims next to a real cause", Line{Msg: `E1 x] "Unable to authenticate the request" err="[invalid bearer token, namespace claim is missing, service account UID (a) does not match claim (b)]"`}, "serviceaccount-recreated", "apiserver"},
		{"webhook frame", Line{Msg: "Failed to make webhook authenticator request: the server has asked for the client to provide credentials"}, "authn-webhook-rejected", "apiserver"},
		{"delegated 401", Line{Msg: "Unable to authenticate the request due to an error: Unauthorized"}, "authn-webhook-rejected", "apiserver"},
		{"client 401", Line{Msg: "Failed to list *v1.Pod: Unauthorized"}, "client-unauthorized", "client"},
		{"aws sdk", Line{Msg: "NoCredentialProviders: no valid providers in chain. Deprecated."}, "cloud-credentials-missing", "aws"},
		{"azure", Line{Msg: "AADSTS70021: No matching federated identity record found for presented assertion."}, "cloud-web-identity-failed", "azure"},
		{"named beats marker", Line{Msg: `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`}, "cloud-login-failed", "azure"},
		{"named beats a longer marker", Line{Msg: "failed to get token", Err: `http call(https://login.microsoftonline.com/t/oauth2/v2.0/token)(POST) error: reply status code was 401: {"error_description":"AADSTS7000222: The provided client secret keys are expired."}`}, "cloud-credential-expired", "azure"},
		{"zap console", Line{Msg: `Unable to authenticate the request	{"component": "vcluster", "error": "[invalid bearer token, oidc: email not verified]"}`}, "oidc-token-rejected", "vcluster"},
		// Delegation: the webhook authenticator's frame gives way to a denied TokenReview, and only to it;
		// mesh components named by their own words.
		{"denied TokenReview in the frame", Line{Msg: `Failed to make webhook authenticator request: tokenreviews.authentication.k8s.io is forbidden: User "system:serviceaccount:m:p" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope`}, "tokenreview-forbidden", "apiserver"},
		{"frame around anything else", Line{Msg: "Failed to make webhook authenticator request: Unauthorized"}, "authn-webhook-rejected", "apiserver"},
		{"denied SubjectAccessReview", Line{Msg: "Failed to make webhook authorizer request", Err: `subjectaccessreviews.authorization.k8s.io is forbidden: User "system:serviceaccount:m:p" cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster scope`}, "tokenreview-forbidden", "client"},
		{"istiod JWKS fetch", Line{Msg: `Failed to fetch public key from "https://idp/jwks": Get "https://idp/jwks": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`}, "jwks-unreachable", "istiod"},
		{"envoy access log", Line{Msg: `"GET / HTTP/1.1" 401 - jwt_authn_access_denied{Jwt_is_expired} - "-" 0 14 0 -`}, "token-expired", "envoy"},
		{"linkerd proxy", Line{Msg: `linkerd2_proxy::app::identity Failed to certify identity: grpc-status: Unknown`}, "unknown", "linkerd-proxy"},
		{"linkerd identity", Line{Msg: "Unable to create kubernetes token reviews: "}, "tokenreview-forbidden", "linkerd-identity"},
	}
	for _, tt := range tests {
		m, ok := cl.Classify(tt.l)
		if !ok || m.Cause != tt.cause || m.Component != tt.writer {
			t.Errorf("%s: got %q/%q (ok=%v), want %q/%q", tt.name, m.Cause, m.Component, ok, tt.cause, tt.writer)
		}
	}
}

// TestEventFramingCause: an event whose %v is a catalogued cause gives way to that cause. The
// lines are the lab's cloud controller managers' (docs/evidence/cloud-password-rotated-*.json);
// an inner error the catalogue does not know leaves the event.
func TestEventFramingCause(t *testing.T) {
	t.Parallel()
	cl := NewClassifier(catalogue.Default())
	tests := []struct{ msg, cause string }{
		{`Cloud provider could not be initialized: could not init cloud provider "openstack": Expected HTTP response code [201 202] when accessing [POST http://10.200.24.1:42515/v3/auth/tokens], but got 401 instead: {"error":{"code":401,"message":"The request you have made requires authentication.","title":"Unauthorized"}}`, "cloud-login-failed"},
		{`error syncing 'node-2': failed to get instance metadata for node node-2: Unable to re-authenticate: Expected HTTP response code [200 204 300] when accessing [GET http://10.200.24.1:46551/v3/auth/projects], but got 401 instead: {"error":{"code":401}}, requeuing`, "cloud-login-failed"},
		{`error syncing 'node-2': failed to get instance metadata for node node-2: ServerFaultCode: Login failure, requeuing`, "cloud-login-failed"},
		{`error syncing 'node-2': failed to get instance metadata for node node-2: dial tcp 10.0.0.1:443: connect: connection refused, requeuing`, "cloud-provider-not-initialized"},
		{`Cloud provider could not be initialized: could not init cloud provider "qingcloud": QingCloud Error: Code (1200), Message (AuthFailure, illegal access key [X])`, "cloud-provider-not-initialized"},
	}
	for _, tt := range tests {
		m, ok := cl.Classify(Line{Msg: tt.msg})
		if !ok || m.Cause != tt.cause {
			t.Errorf("%.70q…: got %q (%v), want %q", tt.msg, m.Cause, ok, tt.cause)
		}
	}
}

// TestKubeletNodeObjectFrames: the in-tree kubelet's two lines when it cannot build its Node
// object (the lab's, docs/evidence/cloud-password-rotated-in-tree.json) name the kubelet's failure,
// not only the vCenter login inside them; the login line around them stays cloud-login-failed.
func TestKubeletNodeObjectFrames(t *testing.T) {
	t.Parallel()
	cl := NewClassifier(catalogue.Default())
	const zone = "failed to get zone from cloud provider: ServerFaultCode: Login failure"
	tests := []struct {
		l               Line
		cause, spelling string
	}{
		{Line{Msg: "Kubelet failed to get node info", Err: zone, Severity: "E"}, "kubelet-node-info-failed", "start"},
		{Line{Msg: "Unable to construct v1.Node object for kubelet", Err: zone, Severity: "E"}, "kubelet-node-info-failed", "register"},
		{Line{Msg: "Cannot connect to vCenter with err: ServerFaultCode: Login failure", Severity: "E"}, "cloud-login-failed", "vcsim"},
	}
	for _, tt := range tests {
		m, ok := cl.Classify(tt.l)
		if !ok || m.Cause != tt.cause || m.Spelling != tt.spelling {
			t.Errorf("%q: got %q/%q (ok=%v), want %q/%q", tt.l.Msg, m.Cause, m.Spelling, ok, tt.cause, tt.spelling)
		}
	}
}
