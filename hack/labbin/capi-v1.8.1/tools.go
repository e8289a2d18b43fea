//go:build tools

// Package tools pins the Cluster API v1.8.1 managers the lab builds: core, kubeadm bootstrap and
// KubeadmControlPlane.
package tools

import (
	_ "sigs.k8s.io/cluster-api"
	_ "sigs.k8s.io/cluster-api/bootstrap/kubeadm"
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl"
	_ "sigs.k8s.io/cluster-api/controlplane/kubeadm"
)
