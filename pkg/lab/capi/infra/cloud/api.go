// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package cloud is the lab's cloud API: the lab process, which owns the hosts (network
// namespaces, processes) and the LabClusters' balancers, serves its controller.Cloud over HTTP
// (Server), and Client is a controller.Cloud for a provider controller that runs elsewhere —
// a Pod in the self-managed workload cluster, which can no more make lab hosts than a CAPA Pod
// can make EC2 instances without the AWS API.
//
// The API is JSON over HTTP(S) with a bearer token (the Pod reads it from a Secret):
//
//	POST   /v1/hosts/{host}                                  {"bootstrap","meta"} → HostInfo
//	GET    /v1/hosts/{host}                                  → HostInfo
//	DELETE /v1/hosts/{host}                                  → 204
//	PUT    /v1/balancers/{namespace}/{name}                  LabClusterSpec → {"addr","created"}
//	DELETE /v1/balancers/{namespace}/{name}                  → {"deleted"}
//	PUT    /v1/balancers/{namespace}/{name}/members/{host}   {"addr"} → 204
//	DELETE /v1/members/{host}                                → 204 (from whichever balancer)
//
// A failed call answers a status and {"error": "one line"}.
package cloud

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
)

// createHostRequest is POST /v1/hosts/{host}'s body.
type createHostRequest struct {
	Bootstrap []byte            `json:"bootstrap"` // the cloud-config, base64 in JSON
	Meta      map[string]string `json:"meta,omitempty"`
}

// ensureBalancerResponse is PUT /v1/balancers/{namespace}/{name}'s answer.
type ensureBalancerResponse struct {
	Addr    string `json:"addr"`
	Created bool   `json:"created"`
}

// deleteBalancerResponse is DELETE /v1/balancers/{namespace}/{name}'s answer.
type deleteBalancerResponse struct {
	Deleted bool `json:"deleted"`
}

// registerRequest is PUT /v1/balancers/{namespace}/{name}/members/{host}'s body.
type registerRequest struct {
	Addr string `json:"addr"`
}

// errorResponse is a failed call's body.
type errorResponse struct {
	Error string `json:"error"`
}

// hostPath, balancerPath, memberPath and membershipPath are the resources' paths, their parts
// escaped.
func hostPath(host string) string { return "/v1/hosts/" + url.PathEscape(host) }

func balancerPath(namespace, name string) string {
	return "/v1/balancers/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
}

func memberPath(namespace, name, host string) string {
	return balancerPath(namespace, name) + "/members/" + url.PathEscape(host)
}

func membershipPath(host string) string { return "/v1/members/" + url.PathEscape(host) }

// NewToken returns a random bearer token (32 bytes, hex).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("lab cloud: token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
