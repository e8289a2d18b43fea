//go:build tools

// Package tools pins the Kubernetes commands the lab builds from the in-tree cloud-provider era
// (a whole v1.29 control plane and nodes: apiserver, controller manager, scheduler, kubelet, kube-proxy).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
