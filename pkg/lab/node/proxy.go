// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"fmt"
	"net"

	"sigs.k8s.io/yaml"
)

// kubeProxyConfiguration is the part of kubeproxy.config.k8s.io/v1alpha1 KubeProxyConfiguration
// the lab sets (a local type for the reason given at kubeletConfiguration). Pointers are the
// fields where 0 means "leave the kernel alone" rather than "use the default".
type kubeProxyConfiguration struct {
	APIVersion       string `json:"apiVersion"`
	Kind             string `json:"kind"`
	ClientConnection struct {
		Kubeconfig string `json:"kubeconfig"`
	} `json:"clientConnection"`
	HostnameOverride   string `json:"hostnameOverride"`
	BindAddress        string `json:"bindAddress"`
	HealthzBindAddress string `json:"healthzBindAddress"`
	MetricsBindAddress string `json:"metricsBindAddress"`
	Mode               string `json:"mode"`
	IPTables           struct {
		LocalhostNodePorts bool `json:"localhostNodePorts"`
	} `json:"iptables"`
	DetectLocalMode   string   `json:"detectLocalMode"`
	ClusterCIDR       string   `json:"clusterCIDR"`
	NodePortAddresses []string `json:"nodePortAddresses"`
	OOMScoreAdj       int      `json:"oomScoreAdj"`
	Conntrack         struct {
		MaxPerCore            int    `json:"maxPerCore"`
		Min                   int    `json:"min"`
		TCPEstablishedTimeout string `json:"tcpEstablishedTimeout"`
		TCPCloseWaitTimeout   string `json:"tcpCloseWaitTimeout"`
	} `json:"conntrack"`
}

// kubeProxyConfig runs kube-proxy in iptables mode inside the node's network namespace, changing
// nothing outside it: every conntrack setting is 0 ("leave the kernel's value alone"; the
// nf_conntrack_max behind maxPerCore is machine-wide), no localhost node ports (they would set
// route_localnet), no OOM score change (the bounding set lacks CAP_SYS_RESOURCE anyway).
func (c *Config) kubeProxyConfig() ([]byte, error) {
	kc := kubeProxyConfiguration{
		APIVersion:         "kubeproxy.config.k8s.io/v1alpha1",
		Kind:               "KubeProxyConfiguration",
		HostnameOverride:   c.Name,
		BindAddress:        c.Host.IP.String(),
		HealthzBindAddress: net.JoinHostPort(c.Host.IP.String(), "10256"),
		MetricsBindAddress: "127.0.0.1:10249",
		Mode:               "iptables",
		NodePortAddresses:  []string{c.Host.IP.String() + "/32"},
		// Traffic from the pods is local; without a cluster CIDR, this node's pods are all we know.
		DetectLocalMode: "ClusterCIDR",
		ClusterCIDR:     c.PodCIDR.String(),
	}
	if c.ClusterCIDR.IsValid() {
		kc.ClusterCIDR = c.ClusterCIDR.String()
	}
	kc.ClientConnection.Kubeconfig = c.path("kube-proxy.kubeconfig")
	kc.Conntrack.TCPEstablishedTimeout, kc.Conntrack.TCPCloseWaitTimeout = "0s", "0s"
	data, err := yaml.Marshal(kc)
	if err != nil {
		return nil, fmt.Errorf("node %s: kube-proxy configuration: %w", c.Name, err)
	}
	return data, nil
}

// kubeProxyArgs are kube-proxy's flags; everything else is in its configuration file.
func (c *Config) kubeProxyArgs() []string {
	return []string{"--config=" + c.path("kube-proxy.yaml"), "--v=1"}
}
