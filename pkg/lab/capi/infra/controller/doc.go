// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package controller runs the lab's Cluster API infrastructure provider (package infra): the
// LabCluster reconciler, which gives every LabCluster a lab load balancer (package
// controlplane/lb) as its control-plane endpoint, and the LabMachine reconciler, which turns a
// LabMachine into a lab host through the Hosts interface, following the v1beta1 contract and
// infra.Plan's steps, and registers control-plane hosts with their LabCluster's balancer.
// Every step taken is kept in a timeline (Controller.Events) so that scenarios can show when a
// machine left the balancer relative to what Cluster API did.
//
// It is built on client-go's dynamic client, informers and work queues, not controller-runtime:
// the informers only tell which object to look at; each pass reads the objects afresh.
//
// Open question for the kubeadm host: infra.Plan registers a control-plane host only once its
// bootstrap sentinel exists, but kubeadm init (v1.30.14, cmd/kubeadm/app/cmd/init.go Client)
// talks to its own apiserver through admin.conf, whose server is the control-plane endpoint,
// that is this balancer: the first control-plane host cannot finish behind an empty balancer.
// CAPD and CAPA register at host creation and let the health check keep traffic away until the
// apiserver answers; Plan will need the same for the first machine, at least.
package controller
