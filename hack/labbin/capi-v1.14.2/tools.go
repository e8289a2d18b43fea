//go:build tools

// Package tools pins the Cluster API v1.14.2 managers the lab builds: core, kubeadm bootstrap and
// KubeadmControlPlane.
package tools

import (
	_ "sigs.k8s.io/cluster-api/bootstrap/kubeadm"
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl"
	_ "sigs.k8s.io/cluster-api/controlplane/kubeadm"
	_ "sigs.k8s.io/cluster-api/core"
)
