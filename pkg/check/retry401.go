// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"net/http"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// clusterTries bounds how often a request to the cluster endpoint answered 401 is sent.
const clusterTries = 5

// retry401 sends a request to the cluster endpoint (a load balancer, or the kubernetes Service
// from a pod) again, on a new connection, when it was answered 401. Behind it some members may
// reject credwatch's credentials — in a pod, a member whose key drifted rejects the watcher's
// service-account token — and each connection is sent to one member: without this, a third of a
// watcher's intervals on a 3-member cluster lost their discovery to the very member they should
// report. The member clients are not wrapped: there a 401 is the answer.
type retry401 struct{ rt http.RoundTripper }

func (r retry401) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.rt.RoundTrip(req)
	for try := 1; err == nil && resp.StatusCode == http.StatusUnauthorized && try < clusterTries; try++ {
		next := req.Clone(req.Context())
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				break
			}
			b, gerr := req.GetBody()
			if gerr != nil {
				break
			}
			next.Body = b
		}
		next.Close = true
		resp.Body.Close()
		utilnet.CloseIdleConnectionsFor(r.rt) // the 401's connection among them: the retry dials anew
		resp, err = r.rt.RoundTrip(next)
	}
	return resp, err
}

// WrappedRoundTripper lets client-go reach the inner transport.
func (r retry401) WrappedRoundTripper() http.RoundTripper { return r.rt }
