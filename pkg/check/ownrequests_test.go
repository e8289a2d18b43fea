// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/credwatch/credwatch/pkg/finding"
)

func TestReasonOfTellsTheCode(t *testing.T) {
	t.Parallel()
	leases := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	tests := []struct {
		err  error
		want string
	}{
		{apierrors.NewServiceUnavailable(""), "HTTP 503"},
		{fmt.Errorf("list leases: %w", apierrors.NewServiceUnavailable("")), "list leases (HTTP 503)"},
		{apierrors.NewServiceUnavailable("the request has been made before all known HTTP paths have been installed, please try again"), "the request has been made before all known HTTP paths have been installed, please try again (HTTP 503)"},
		{apierrors.NewUnauthorized("Unauthorized"), "Unauthorized"},                       // says it already
		{apierrors.NewInternalError(errors.New("boom")), "Internal error occurred: boom"}, // says it already
		{apierrors.NewForbidden(leases, "x", errors.New("no")), `leases.coordination.k8s.io "x" is forbidden: no`},
		{apierrors.NewTooManyRequests("slow down", 1), "slow down"},
		{errors.New("plain"), "plain"},
	}
	for _, tt := range tests {
		if got := ReasonOf(tt.err); got != tt.want {
			t.Errorf("ReasonOf(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
	if got := classifyFailure(ReasonOf(apierrors.NewServiceUnavailable(""))); got != failServer {
		t.Errorf("a bare 503: %q, want %q", got, failServer)
	}
}

func TestOwnRequests(t *testing.T) {
	t.Parallel()
	jwt := "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJpc3MiOiJodHRwczovL2kifQ.c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJl"
	s := &Snapshot{Sources: map[string]string{
		SrcLeases:         `list leases: Get "https://10.96.0.1:443/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?timeout=10s": context deadline exceeded`,
		SrcMatrix:         "get probe service account credwatch/credwatch-probe: the server was unable to return a response in the time allotted, but may still be processing the request (get serviceaccounts credwatch-probe)",
		SrcEndpointSlices: "list EndpointSlices of default/kubernetes: Unauthorized",
		SrcClusterAPI:     "read KubeadmControlPlane default/w1: the server is currently unable to handle the request",
		SrcPodLogs:        "follow kube-apiserver pod logs: Get \"https://10.96.0.1:443/api/v1/namespaces/kube-system/pods?token=" + jwt + "\": dial tcp 10.96.0.1:443: connect: connection refused",
		// not this finding
		SrcSecrets:      `list secrets: secrets is forbidden: User "system:serviceaccount:credwatch:credwatch" cannot list resource "secrets"`,
		SrcCloud:        "--no-cloud",
		SrcMetrics:      "apiserver-3: GET /metrics: context deadline exceeded",
		SrcPublicIssuer: "Get \"https://issuer.example/.well-known/openid-configuration\": dial tcp: connect: connection refused",
	}}
	fs := checkOwnRequests(s)
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(fs), fs)
	}
	f := fs[0]
	want := "credwatch's own requests failed: endpointslices were refused with 401 (list EndpointSlices of default/kubernetes: Unauthorized); " +
		"trust-matrix, leases timed out (" + s.Sources[SrcMatrix] + "); " +
		"cluster-api got a server error (" + s.Sources[SrcClusterAPI] + "); " +
		"pod-logs could not connect (follow kube-apiserver pod logs: Get \"https://10.96.0.1:443/api/v1/namespaces/kube-system/pods?token="
	if f.ID != "own-requests-refused" || f.Severity != "warning" || !strings.HasPrefix(f.Message, want) {
		t.Errorf("finding %s (%s):\n%s\nwant it to begin\n%s", f.ID, f.Severity, f.Message, want)
	}
	if !strings.HasSuffix(f.Message, "connect: connection refused); what it reports of them is from an earlier interval or missing") {
		t.Errorf("message ends: %s", f.Message)
	}
	var objs []string
	for _, e := range f.Evidence {
		objs = append(objs, e.Object+"="+e.Key)
	}
	if w := []string{"endpointslices=refused", "trust-matrix=timed-out", "leases=timed-out", "cluster-api=server-error", "pod-logs=unreachable"}; !slices.Equal(objs, w) {
		t.Errorf("evidence %v, want %v", objs, w)
	}
	for _, text := range append([]string{f.Message}, evidenceValues(f)...) {
		if strings.Contains(text, "c2lnbmF0dXJl") {
			t.Errorf("a token's signature in the output: %s", text)
		}
	}
}

func evidenceValues(f finding.Finding) []string {
	var out []string
	for _, e := range f.Evidence {
		out = append(out, e.Value)
	}
	return out
}

// A run whose own requests all succeeded, or failed only by authorization or on purpose, says
// nothing; and the check runs in every registry run, skipped by nothing.
func TestOwnRequestsQuiet(t *testing.T) {
	t.Parallel()
	for _, sources := range []map[string]string{nil, {}, {SrcCloud: "--no-cloud", SrcMatrix: "not asked: a read-only fetch mints no token",
		SrcLeases: `leases.coordination.k8s.io is forbidden: User "x" cannot list resource "leases"`}} {
		if fs := checkOwnRequests(&Snapshot{Sources: sources}); len(fs) != 0 {
			t.Errorf("%v: %+v", sources, fs)
		}
	}
	r := Run(&Snapshot{Sources: map[string]string{SrcNodes: "list nodes: Unauthorized"}}, Registry())
	if fs := r.FindingsOf("own-requests"); len(fs) != 1 || !strings.Contains(fs[0].Message, "nodes were refused with 401 (list nodes: Unauthorized)") {
		t.Errorf("own-requests in a registry run: %+v", fs)
	}
}
