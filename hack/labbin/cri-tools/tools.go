//go:build tools

// Package tools pins crictl, which kubeadm 1.30 requires on a kubeadm host.
package tools

import _ "sigs.k8s.io/cri-tools/cmd/crictl"
