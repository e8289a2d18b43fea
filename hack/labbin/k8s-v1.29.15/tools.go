//go:build tools

// Package tools pins the Kubernetes commands the lab builds from the in-tree cloud-provider era.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
