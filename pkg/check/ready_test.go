// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

func TestParseReadyz(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want []string
	}{
		{"[+]ping ok\n[+]log ok\nreadyz check passed\n", nil},
		{"[+]ping ok\n[-]etcd failed: reason withheld\n[+]informer-sync ok\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n", []string{"etcd", "etcd-readiness"}},
		{"", nil},
		{"  [-]shutdown failed: reason withheld", []string{"shutdown"}},
	} {
		if got := ParseReadyz(tc.body); !slices.Equal(got, tc.want) {
			t.Errorf("ParseReadyz(%q) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

func TestCheckReadiness(t *testing.T) {
	t.Parallel()
	s := &Snapshot{Members: []Member{
		{Endpoint: Endpoint{Name: "a"}, Reachable: true},
		{Endpoint: Endpoint{Name: "b", FoundBy: []string{"flag"}}, Reachable: true, NotReady: []string{"etcd"}},
		{Endpoint: Endpoint{Name: "c", FoundBy: []string{"endpointslice"}}, Reachable: true, NotReady: []string{"etcd"}},
		{Endpoint: Endpoint{Name: "d"}, Reachable: false, NotReady: []string{"etcd"}},
	}}
	fs := checkReadiness(s)
	if len(fs) != 2 || fs[0].Member != "b" || fs[0].Severity != catalogue.Warning || fs[1].Member != "c" || fs[1].Severity != catalogue.Error {
		t.Fatalf("findings: %+v", fs)
	}
}

// A member whose etcd check hangs answers its own handler timeout (HTTP 504) a moment before our
// deadline: that is no answer in time, not "ready" (it once made the watch lab test flaky).
func TestReadyzErrorClasses(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{}
	status := func(code int) error { return apierrors.NewGenericServerResponse(code, "get", gr, "", "", 0, false) }
	for _, tc := range []struct {
		name             string
		err              error
		timedOut, unknwn bool
	}{
		{"handler timeout 504", status(504), true, false},
		{"server timeout", apierrors.NewServerTimeout(gr, "get", 1), true, false},
		{"client deadline", fmt.Errorf("get: %w", context.DeadlineExceeded), true, false},
		{"500 without body", status(500), false, false},
		{"503 shutting down", status(503), false, false},
		{"forbidden", apierrors.NewForbidden(gr, "", errors.New("no")), false, true},
		{"unauthorized", apierrors.NewUnauthorized("no"), false, true},
		{"connection refused", errors.New("dial tcp: connection refused"), false, true},
	} {
		if got := readyzTimedOut(context.Background(), tc.err); got != tc.timedOut {
			t.Errorf("%s: timed out = %v, want %v", tc.name, got, tc.timedOut)
		}
		if !tc.timedOut {
			if got := readyzUnknown(tc.err); got != tc.unknwn {
				t.Errorf("%s: unknown = %v, want %v", tc.name, got, tc.unknwn)
			}
		}
	}
}
