// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package controller runs the lab's Cluster API infrastructure provider (package infra): the
// LabCluster reconciler, which gives every LabCluster a lab load balancer (package
// controlplane/lb) as its control-plane endpoint, and the LabMachine reconciler, which turns a
// LabMachine into a lab host, following the v1beta1 contract and infra.Plan's steps, and
// registers control-plane hosts with their LabCluster's balancer. Both ask the lab's cloud for
// hosts and balancers through the Cloud interface: LocalCloud is this process's (hosts through
// the Hosts interface, in-process balancers), package capi/infra/cloud serves it over HTTP to a
// controller running elsewhere (a Pod in a self-managed cluster).
// Every step taken is kept in a timeline (Controller.Events) so that scenarios can show when a
// machine left the balancer relative to what Cluster API did.
//
// It is built on client-go's dynamic client, informers and work queues, not controller-runtime:
// the informers only tell which object to look at; each pass reads the objects afresh.
//
// A control-plane host joins its LabCluster's balancer as soon as it runs, out of rotation
// until the balancer's health check passes: kubeadm init reaches its own apiserver through the
// control-plane endpoint, so waiting for the bootstrap sentinel would deadlock the first one.
package controller
