// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// failureCases are real error texts, as client-go v0.36.3 and net/http spell them and as fetch
// records them (wrapped by the call that failed), with the class each must get.
func failureCases() []struct {
	name, reason string
	want         failure
} {
	leases := schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	get := func(err error) string {
		return (&url.Error{Op: "Get", URL: "https://10.96.0.1:443/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", Err: err}).Error()
	}
	opErr := func(op string, errno syscall.Errno) error {
		return &net.OpError{Op: op, Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 96, 0, 1), Port: 443}, Err: os.NewSyscallError(op, errno)}
	}
	wrap := func(err error) string { return fmt.Errorf("list leases: %w", err).Error() }
	return []struct {
		name, reason string
		want         failure
	}{
		{"401 Status", wrap(apierrors.NewUnauthorized("Unauthorized")), failRefused},
		{"401 empty", wrap(apierrors.NewUnauthorized("")), failRefused},
		{"401 no Status", wrap(apierrors.NewGenericServerResponse(401, "list", leases, "", "", 0, false)), failRefused},
		{"member rejects our token", "GET /version: rejects credwatch's own token (HTTP 401)", failRefused},
		{"504 Status", wrap(apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)), failTimedOut},
		{"504 no Status", wrap(apierrors.NewGenericServerResponse(504, "list", leases, "", "", 0, false)), failTimedOut},
		{"server timeout", wrap(apierrors.NewServerTimeout(leases, "list", 0)), failTimedOut},
		{"etcd timeout", wrap(apierrors.NewInternalError(errors.New("etcdserver: request timed out"))), failTimedOut},
		{"deadline", wrap(errors.New(get(context.DeadlineExceeded))), failTimedOut},
		{"client timeout", get(errors.New("net/http: request canceled (Client.Timeout exceeded while awaiting headers)")), failTimedOut},
		{"i/o timeout", get(&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("i/o timeout")}), failTimedOut},
		{"stall", errStalled{after: 20e9}.Error(), failTimedOut},
		{"503 no Status", wrap(apierrors.NewGenericServerResponse(503, "list", leases, "", "", 0, false)), failServer},
		{"503 shutting down", wrap(apierrors.NewServiceUnavailable("apiserver is shutting down")), failServer},
		{"500", wrap(apierrors.NewInternalError(errors.New("etcdserver: leader changed"))), failServer},
		{"500 no Status", wrap(apierrors.NewGenericServerResponse(500, "list", leases, "", "", 0, false)), failServer},
		{"connection refused", wrap(errors.New(get(opErr("connect", syscall.ECONNREFUSED)))), failUnreachable},
		{"connection reset", get(opErr("read", syscall.ECONNRESET)), failUnreachable},
		{"joined, first tells", "could not read the cluster's cloud configuration: list secrets: pods is forbidden: no; list nodes: " + get(context.DeadlineExceeded), failTimedOut},
		// Not this finding: authorization, sources not fetched on purpose, other errors.
		{"403", wrap(apierrors.NewForbidden(leases, "", errors.New(`User "system:serviceaccount:credwatch:credwatch" cannot list resource "leases"`))), failNone},
		{"403 no Status", wrap(apierrors.NewGenericServerResponse(403, "list", leases, "", "", 0, false)), failNone},
		{"every review forbidden", "every TokenReview was forbidden: tokenreviews.authentication.k8s.io is forbidden: User \"x\" cannot create resource", failNone},
		{"--no-cloud", "--no-cloud", failNone},
		{"read-only", "not asked: a read-only fetch mints no token", failNone},
		{"no member", "no probe token could be minted: member unreachable", failNone},
		{"not found", "probe service account credwatch/credwatch-probe not found: pass --create-probe-sa", failNone},
		{"not fetched", "", failNone},
		// A 503 whose Status message is empty says nothing in its text: fetch keeps only the text.
		{"503 bare", wrap(apierrors.NewServiceUnavailable("")), failNone},
	}
}

func TestClassifyFailure(t *testing.T) {
	t.Parallel()
	for _, tt := range failureCases() {
		if got := classifyFailure(tt.reason); got != tt.want {
			t.Errorf("%s: classifyFailure(%q) = %q, want %q", tt.name, tt.reason, got, tt.want)
		}
	}
}

// FuzzClassifyFailure: any text gets a known class; repeating an error, or adding a 403 before
// it, changes nothing; the error that told the class is a part of the text.
func FuzzClassifyFailure(f *testing.F) {
	for _, tt := range failureCases() {
		f.Add(tt.reason)
	}
	f.Fuzz(func(t *testing.T, reason string) {
		class, part := classifyParts(reason)
		if class != failNone && (class.phrase() == "" || !strings.Contains(reason, part)) {
			t.Fatalf("classifyParts(%q) = %q, %q", reason, class, part)
		}
		if class == failNone && part != "" {
			t.Fatalf("classifyParts(%q) = no class, part %q", reason, part)
		}
		if again := classifyFailure(reason + "\n" + reason); again != class {
			t.Fatalf("%q twice: %q, once: %q", reason, again, class)
		}
		if after := classifyFailure("leases is forbidden: no\n" + reason); after != class {
			t.Fatalf("after a 403: %q, alone: %q", after, class)
		}
	})
}
