// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package podtenant

import (
	"errors"
	"net/url"
	"testing"

	"golang.org/x/net/http2"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestTransient(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"504 in an etcd election", apierrors.NewTimeoutError("the server was unable to return a response in the time allotted", 0), true},
		{"server timeout", apierrors.NewServerTimeout(pods, "list", 1), true},
		{"503", apierrors.NewServiceUnavailable("etcd"), true},
		{"429", apierrors.NewTooManyRequests("slow down", 1), true},
		{"403", apierrors.NewForbidden(pods, "", errors.New("no")), false},
		{"stream aborted by a storage-less member", &url.Error{Op: "Get", URL: "https://10.200.95.1:6443/api/v1/pods",
			Err: http2.StreamError{StreamID: 109, Code: http2.ErrCodeInternal}}, true},
		{"stream refused", http2.StreamError{StreamID: 1, Code: http2.ErrCodeRefusedStream}, false},
		{"plain error", errors.New("dial tcp: refused"), false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("%s: transient = %v, want %v", c.name, got, c.want)
		}
	}
}
