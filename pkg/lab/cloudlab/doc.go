// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package cloudlab runs the second field report on a lab with real nodes: govmomi's vCenter
// simulator on the lab network, with one VM per node and one service account whose password is
// rotated, the cloud config files as kubespray (in-tree era) and the vSphere CPI (external era)
// write them, and the scenario cloud-password-rotated, which records what the real
// kube-controller-manager, cloud controller manager and kubelets do, step by step.
package cloudlab
