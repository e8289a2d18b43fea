// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
	"github.com/credwatch/credwatch/pkg/logs/internal/scan"
)

func TestClassifyFormats(t *testing.T) {
	t.Parallel()
	ref := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name, line             string
		cause, host, component string
		format                 string
		parts                  int // 0: do not check
		when                   string
	}{
		{name: "klog 1.19 unstructured",
			line:  `E1215 08:16:43.535948       1 authentication.go:53] Unable to authenticate the request due to an error: [invalid bearer token, Token has expired.]`,
			cause: "token-expired", host: "m1", component: "apiserver", format: "klog", parts: 2, when: "2026-12-15T08:16:43.535948Z"},
		{name: "klog structured 1.36 no keys found",
			line:  `E1129 21:09:48.148610   18874 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, invalid signature, no keys found]"`,
			cause: "signing-key-unknown", host: "m1", component: "apiserver", format: "klog", parts: 2},
		{name: "bare invalid bearer token",
			line:  `E1129 21:09:48.148610   18874 authentication.go:75] "Unable to authenticate the request" err="invalid bearer token"`,
			cause: "issuer-not-accepted", host: "m1", format: "klog", parts: 1},
		{name: "nested aggregate of old versions",
			line:  `E0101 00:00:00.000000       1 authentication.go:63] "Unable to authenticate the request" err="[invalid bearer token, [invalid bearer token, square/go-jose: error in cryptographic primitive]]"`,
			cause: "signing-key-unknown", format: "klog", parts: 3},
		{name: "audience with quoted slices",
			line:  `E0101 00:00:00.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, token audiences [\"https://old\"] is invalid for the target audiences [\"https://kubernetes.default.svc\"]]"`,
			cause: "audience-mismatch", parts: 2},
		{name: "service account recreated",
			line:  `E0101 00:00:00.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account UID (8c6f) does not match claim (1d2e)]"`,
			cause: "serviceaccount-recreated"},
		{name: "not valid yet",
			line:  `E0101 00:00:00.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token is not valid yet]"`,
			cause: "token-not-yet-valid"},
		{name: "unknown text is kept",
			line:  `E0101 00:00:00.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, something new happened]"`,
			cause: "unknown", parts: 2},
		{name: "truncated structured line",
			line:  `E0101 00:00:00.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has been inva`,
			cause: "bound-object-invalidated"},
		{name: "truncated in the loopback part",
			line:  `E0101 00:00:00.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bea`,
			cause: "unknown"},
		{name: "klog JSON",
			line:  `{"ts":1765786603.535948,"caller":"filters/authentication.go:75","msg":"Unable to authenticate the request","err":"[invalid bearer token, service account token has expired]","v":0}`,
			cause: "token-expired", host: "m1", format: "json", when: "2025-12-15T08:16:43.535948Z"},
		{name: "kubectl --prefix",
			line:  `[pod/kube-apiserver-cp-2.example/kube-apiserver] E1215 08:16:43.535948       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"`,
			cause: "token-expired", host: "cp-2", component: "apiserver", format: "kubectl+klog"},
		{name: "stern with colours",
			line:  "\x1b[32mkube-apiserver-cp-3\x1b[0m \x1b[32mkube-apiserver\x1b[0m E1215 08:16:43.535948       1 authentication.go:75] \"Unable to authenticate the request\" err=\"[invalid bearer token, service account token has expired]\"",
			cause: "token-expired", host: "cp-3", component: "apiserver", format: "kubectl+klog"},
		{name: "CRI",
			line:  `2026-11-29T08:00:04.918123456Z stderr F E1129 08:00:04.918000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"`,
			cause: "token-expired", format: "cri+klog", when: "2026-11-29T08:00:04.918123456Z"},
		{name: "CRI around klog JSON",
			line:  `2026-11-29T08:00:04.918Z stderr F {"ts":1795939204.918,"msg":"Unable to authenticate the request","err":"invalid bearer token"}`,
			cause: "issuer-not-accepted", format: "cri+json"},
		{name: "Docker json-file",
			line:  `{"log":"E1129 08:00:01.017000       1 authentication.go:75] \"Unable to authenticate the request\" err=\"[invalid bearer token, service account token has been invalidated]\"\n","stream":"stderr","time":"2026-11-29T08:00:01.017Z"}`,
			cause: "bound-object-invalidated", format: "docker+klog"},
		{name: "truncated Docker json-file",
			line:  `{"log":"E1129 08:00:01.017000       1 authentication.go:75] \"Unable to authenticate the request\" err=\"[invalid bearer token, service account token has expi`,
			cause: "token-expired", format: "docker+klog"},
		{name: "syslog kubelet",
			line:  `Dec 16 09:24:47 ip-10-224-148-177 kubelet[1484]: I1216 09:24:47.060101    1484 kubelet.go:1729] "Deleted mirror pod because it is outdated" pod="kube-system/kube-apiserver-x"`,
			cause: "mirror-pod-deleted", host: "ip-10-224-148-177", component: "kubelet", format: "syslog+klog"},
		{name: "journald short-iso",
			line:  `2022-12-16T09:24:34+0000 ip-10-224-148-177 cloud-init[1078]: [2022-12-16 09:24:15] [certs] Generating "sa" key and public key`,
			cause: "kubeadm-new-sa-key", host: "ip-10-224-148-177", component: "cloud-init", format: "syslog"},
		{name: "audit 401",
			line:  `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseStarted","requestURI":"/api/v1/pods","verb":"list","user":{},"sourceIPs":["10.0.0.7"],"userAgent":"kube-controller-manager/v1.30.14","responseStatus":{"metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401},"requestReceivedTimestamp":"2026-11-29T08:00:00.000000Z","stageTimestamp":"2026-11-29T08:00:00.001000Z"}`,
			cause: "client-unauthorized", component: "apiserver", format: "audit"},
		{name: "client Unauthorized",
			line:  `E1129 08:00:00.000000       1 reflector.go:158] "Unhandled Error" err="k8s.io/client-go/informers/factory.go:160: Failed to watch *v1.Pod: failed to list *v1.Pod: Unauthorized"`,
			cause: "client-unauthorized", component: "client"},
		{name: "kubectl credentials",
			line:  `error: You must be logged in to the server (the server has asked for the client to provide credentials)`,
			cause: "client-unauthorized", format: "plain"},
		{name: "vCenter login",
			line:  `E0101 00:00:00.000000       1 connection.go:65] Failed to create govmomi client. err: ServerFaultCode: Cannot complete login due to an incorrect user name or password.`,
			cause: "cloud-login-failed"},
		{name: "gophercloud v2",
			line:  `E0101 00:00:00.000000       1 openstack.go:1] failed: Expected HTTP response code [201 202] when accessing [POST https://keystone:5000/v3/auth/tokens], but got 401 instead: {"error":{"code":401}}`,
			cause: "cloud-login-failed"},
		{name: "OAuth error body (the second line of MSAL's error)",
			line:  `{"error":"invalid_client","error_description":"AADSTS7000222: The provided client secret keys for app 'x' are expired.","error_codes":[7000222]}`,
			cause: "cloud-credential-expired", format: "json"},
		{name: "OIDC provider",
			line:  `An error occurred (InvalidIdentityToken) when calling the AssumeRoleWithWebIdentity operation: No OpenIDConnect provider found in your account for https://oidc.example`,
			cause: "oidc-provider-missing"},
		{name: "kubelet token refresh",
			line:  `E0101 00:00:00.000000    1401 token_manager.go:121] "Couldn't update token" err="Unauthorized" cacheKey="x"`,
			cause: "token-refresh-failed"},
		{name: "etcd member removed (zap JSON)",
			line:  `{"level":"info","ts":"2022-12-16T09:20:01.123Z","caller":"membership/cluster.go:472","msg":"removed member","cluster-id":"1","removed-remote-peer-id":"2"}`,
			cause: "etcd-member-removed", format: "json"},
		{name: "endpoints reset",
			line:  `I1216 09:26:00.000000       1 lease.go:265] Resetting endpoints for master service "kubernetes" to [10.0.1.1 10.0.1.2]`,
			cause: "apiserver-endpoints-changed"},
		{name: "ordinary line", line: `I1216 09:26:00.000000       1 controller.go:615] quota admission added evaluator for: endpoints`},
		{name: "context deadline outside authentication", line: `E0101 00:00:00.000000       1 x.go:1] "request failed" err="context deadline exceeded"`},
	}
	cl := cause.NewClassifier(catalogue.Default())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := parseRecord(tt.line, lineHint{host: "m1", ref: ref})
			ev, ok := Classify(cl, rec)
			if tt.cause == "" {
				if ok {
					t.Fatalf("classified as %s, want nothing", ev.Cause)
				}
				return
			}
			if !ok || ev.Cause != tt.cause {
				t.Fatalf("cause %q (ok=%v), want %q; record %+v", ev.Cause, ok, tt.cause, rec)
			}
			check := func(what, got, want string) {
				if want != "" && got != want {
					t.Errorf("%s %q, want %q", what, got, want)
				}
			}
			check("host", ev.Host, tt.host)
			check("component", ev.Component, tt.component)
			check("format", ev.Format, tt.format)
			if tt.when != "" {
				check("time", ev.Time.Format(time.RFC3339Nano), tt.when)
			}
			if tt.parts != 0 && len(ev.Parts) != tt.parts {
				t.Errorf("parts %+v, want %d", ev.Parts, tt.parts)
			}
		})
	}
}

func TestGateFindsEveryStandaloneMessage(t *testing.T) {
	t.Parallel()
	msgs := cause.Standalone(catalogue.Default())
	g := scan.NewGate(anchors(catalogue.Default()))
	for _, p := range msgs {
		line := []byte("I0101 00:00:00.000000 1 x.go:1] prefix " + p.Text + " suffix\n")
		if starts := g.Lines(line, nil); len(starts) != 1 {
			t.Errorf("%s/%s %q: gate does not let it through", p.Cause, p.Key, p.Text)
		}
	}
	for _, mk := range cause.Markers {
		if starts := g.Lines([]byte("x "+mk+" y"), nil); len(starts) != 1 {
			t.Errorf("marker %q not found", mk)
		}
	}
}

func TestRedactTokens(t *testing.T) {
	t.Parallel()
	in := "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl done"
	got := evidenceLine(in)
	if got != "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.REDACTED done" {
		t.Fatal(got)
	}
}
