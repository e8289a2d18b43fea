// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package scenario reproduces the credential faults seen in the field on a real lab control plane
// (package lab) while tenants (package tenant) call the API through the load balancer, and returns
// the evidence: per-member tallies of what the tenants got back and the "Unable to authenticate the
// request" lines each real kube-apiserver logged.
//
// Each Scenario is a function over a running *lab.Lab, so tests can run several on one lab; Run
// gives one scenario its own Environment end to end (`credwatch lab scenario NAME`): a plain lab,
// a cloud era's lab, or a Cluster API management cluster.
package scenario
