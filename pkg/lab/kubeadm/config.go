// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package kubeadm holds what a kubeadm control plane on a lab host needs besides kubeadm's
// defaults (issue 23): the settings Cluster API's KubeadmConfigSpec must carry for the lab (Lab),
// and an InitConfiguration/ClusterConfiguration document (kubeadm.k8s.io/v1beta3, kubeadm 1.30)
// for running `kubeadm init` on a host directly (InitConfig), as the bootstrap data does.
// Subpackage images builds the control-plane images from the lab's binaries.
package kubeadm

import (
	"fmt"
	"net/netip"
	"strings"

	"sigs.k8s.io/yaml"
)

// Lab is what every kubeadm node of the lab sets, in kubeadm's own terms.
type Lab struct {
	// SkipPhases: the lab runs no CoreDNS and no kube-proxy on control-plane hosts (their images are
	// not built; tenants run on lab worker nodes with the lab's kube-proxy). Cluster API also needs
	// the KubeadmControlPlane annotations SkipAnnotations.
	SkipPhases []string
	// IgnorePreflightErrors are the preflight checks a lab host fails for being a network namespace
	// on a shared machine, not a VM: cgroup v1 and kernel config (SystemVerification), swap, the
	// bridge netfilter sysctl the machine owns, the machine's CPU and memory when busy,
	// conntrack, and a check that the Go the lab builds kubeadm with breaks.
	IgnorePreflightErrors []string
	// ImagePullPolicy Never: the images are imported into each host's containerd, and kubeadm join's
	// preflight would pull CoreDNS and kube-proxy otherwise.
	ImagePullPolicy string
	// PatchesDir is the host's kubelet patch (node.KubeadmPatchesDir).
	PatchesDir string
	// ControllerManagerArgs keep the FlexVolume directory (a DirectoryOrCreate hostPath) under the
	// host's own /var/lib, not the machine's /usr/libexec.
	ControllerManagerArgs map[string]string
}

// SkipAnnotations are the KubeadmControlPlane annotations that stop Cluster API from managing the
// CoreDNS and kube-proxy addons (api/v1beta1/kubeadm_control_plane_types.go:45-49 in v1.8).
var SkipAnnotations = map[string]string{
	"controlplane.cluster.x-k8s.io/skip-coredns":    "",
	"controlplane.cluster.x-k8s.io/skip-kube-proxy": "",
}

// LabSettings returns the lab's settings; patchesDir is node.KubeadmPatchesDir.
func LabSettings(patchesDir string) Lab {
	return Lab{
		SkipPhases: []string{"addon/coredns", "addon/kube-proxy"},
		IgnorePreflightErrors: []string{
			"SystemVerification", "Swap", "NumCPU", "Mem",
			"FileContent--proc-sys-net-bridge-bridge-nf-call-iptables",
			// conntrack is kube-proxy's; the lab's kubeadm hosts run none.
			"FileExisting-conntrack",
			// kubeadm 1.30 builds https://[IP]:1234 for IPv4 ranges too, which Go since 1.24's
			// url.Parse refuses ("invalid IP-literal"): the lab builds kubeadm with a newer Go
			// than Kubernetes 1.30 did (cmd/kubeadm/app/preflight/checks.go, HTTPProxyCIDRCheck).
			"HTTPProxyCIDR",
		},
		ImagePullPolicy:       "Never",
		PatchesDir:            patchesDir,
		ControllerManagerArgs: map[string]string{"flex-volume-plugin-dir": "/var/lib/kubelet-plugins/volume/exec"},
	}
}

// InitConfig is one host's `kubeadm init`.
type InitConfig struct {
	Lab
	Name string // the node's name (its hostname)
	// Advertise is the apiserver's advertise address; default: kubeadm's choice, the address of
	// the host's default route.
	Advertise         netip.Addr
	CRISocket         string // the host's containerd (node.Node.CRISocket)
	KubernetesVersion string // e.g. v1.30.14
	// ControlPlaneEndpoint is host:port of the control plane (a load balancer); default the
	// advertise address and port 6443.
	ControlPlaneEndpoint string
	PodSubnet            string // default 10.244.0.0/16
	ServiceSubnet        string // default 10.96.0.0/16
}

// YAML is the InitConfiguration and ClusterConfiguration documents (kubeadm.k8s.io/v1beta3).
func (c InitConfig) YAML() ([]byte, error) {
	if c.Name == "" || c.CRISocket == "" || !strings.HasPrefix(c.KubernetesVersion, "v") {
		return nil, fmt.Errorf("kubeadm init configuration: want a name, a CRI socket and a v-prefixed version (got %q, %q, %q)",
			c.Name, c.CRISocket, c.KubernetesVersion)
	}
	endpoint := map[string]any{"bindPort": 6443}
	if c.Advertise.IsValid() {
		endpoint["advertiseAddress"] = c.Advertise.String()
	}
	if c.PodSubnet == "" {
		c.PodSubnet = "10.244.0.0/16"
	}
	if c.ServiceSubnet == "" {
		c.ServiceSubnet = "10.96.0.0/16"
	}
	init := map[string]any{
		"apiVersion":       "kubeadm.k8s.io/v1beta3",
		"kind":             "InitConfiguration",
		"localAPIEndpoint": endpoint,
		"nodeRegistration": map[string]any{
			"name": c.Name, "criSocket": c.CRISocket, "imagePullPolicy": c.ImagePullPolicy,
			"ignorePreflightErrors": c.IgnorePreflightErrors,
		},
		"skipPhases": c.SkipPhases,
		"patches":    map[string]any{"directory": c.PatchesDir},
	}
	cluster := map[string]any{
		"apiVersion":        "kubeadm.k8s.io/v1beta3",
		"kind":              "ClusterConfiguration",
		"kubernetesVersion": c.KubernetesVersion,
		"networking":        map[string]any{"podSubnet": c.PodSubnet, "serviceSubnet": c.ServiceSubnet},
		"controllerManager": map[string]any{"extraArgs": c.ControllerManagerArgs},
	}
	if c.ControlPlaneEndpoint != "" {
		cluster["controlPlaneEndpoint"] = c.ControlPlaneEndpoint
	}
	var out []byte
	for i, doc := range []map[string]any{init, cluster} {
		data, err := yaml.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("kubeadm init configuration: %w", err)
		}
		if i > 0 {
			out = append(out, "---\n"...)
		}
		out = append(out, data...)
	}
	return out, nil
}
