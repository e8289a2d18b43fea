// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package tenant simulates the workloads of a lab cluster without nodes (a lab with nodes runs
// real pods: package podtenant), fast enough for the scenarios' many short windows. A
// Tenant does the kubelet's part: it creates a namespace, a service account and Pod objects (which
// never run), obtains each pod's projected token through the TokenRequest API exactly as the kubelet
// does (bound to the pod, expirationSeconds 3607, the API audiences, refreshed at 80 % of the
// lifetime or after 24 h), and calls the API through the load balancer with that bearer token,
// recording for every request which member served it (the CommonName of the serving certificate) and
// the HTTP status in a tally.Tally (package tally: the lab's one evidence count).
//
// MintVia and Present are the two halves of a cross-member check: mint a token through one member,
// present it to another.
package tenant
