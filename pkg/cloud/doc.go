// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package cloud finds the cloud-provider credentials a Kubernetes control plane runs on (vSphere
// and OpenStack), tests them against the provider for real, and says which consumers did not
// re-read a changed credential and which symptoms of a rejected one the cluster already shows.
//
// Credentials are found in config files (kubespray's /etc/kubernetes/cloud_config, in-tree
// vsphere.conf, vSphere CPI YAML/INI, OpenStack cloud.conf and clouds.yaml) and in the cluster (the
// --cloud-config of control-plane pods, the Secrets their configs name, the usual CPI and CSI
// Secrets and ConfigMaps). A password is kept only in memory to test it; it is never printed or
// serialised.
package cloud
