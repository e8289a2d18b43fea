// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// KubeletPort is the kubelet's API port on the node's address.
const KubeletPort = 10250

// kubeletConfiguration is the part of kubelet.config.k8s.io/v1beta1 KubeletConfiguration the lab
// sets (a local type: k8s.io/kubelet's would link the metrics and tracing stacks into credwatch; a
// test decodes this strictly into the real type).
type kubeletConfiguration struct {
	APIVersion                  string            `json:"apiVersion"`
	Kind                        string            `json:"kind"`
	ContainerRuntimeEndpoint    string            `json:"containerRuntimeEndpoint"`
	ImageServiceEndpoint        string            `json:"imageServiceEndpoint"`
	CgroupDriver                string            `json:"cgroupDriver"`
	FailCgroupV1                bool              `json:"failCgroupV1"`
	FailSwapOn                  bool              `json:"failSwapOn"`
	CgroupRoot                  string            `json:"cgroupRoot"`
	CgroupsPerQOS               bool              `json:"cgroupsPerQOS"`
	EnforceNodeAllocatable      []string          `json:"enforceNodeAllocatable"`
	Address                     string            `json:"address"`
	Port                        int               `json:"port"`
	ReadOnlyPort                int               `json:"readOnlyPort"`
	HealthzBindAddress          string            `json:"healthzBindAddress"`
	HealthzPort                 int               `json:"healthzPort"`
	TLSCertFile                 string            `json:"tlsCertFile"`
	TLSPrivateKeyFile           string            `json:"tlsPrivateKeyFile"`
	Authentication              kubeletAuthn      `json:"authentication"`
	Authorization               kubeletAuthz      `json:"authorization"`
	PodLogsDir                  string            `json:"podLogsDir"`
	VolumePluginDir             string            `json:"volumePluginDir"`
	EvictionHard                map[string]string `json:"evictionHard"`
	ImageGCHighThresholdPercent int               `json:"imageGCHighThresholdPercent"`
	ImageGCLowThresholdPercent  int               `json:"imageGCLowThresholdPercent"`
	ClusterDomain               string            `json:"clusterDomain"`
	SerializeImagePulls         bool              `json:"serializeImagePulls"`
	ResolvConf                  string            `json:"resolvConf"`
}

type kubeletAuthn struct {
	X509 struct {
		ClientCAFile string `json:"clientCAFile"`
	} `json:"x509"`
	Webhook   enabled `json:"webhook"`
	Anonymous enabled `json:"anonymous"`
}

type enabled struct {
	Enabled bool `json:"enabled"`
}

type kubeletAuthz struct {
	Mode string `json:"mode"`
}

// kubeletConfig is the recipe's KubeletConfiguration: cgroup v1 allowed (failCgroupV1: false), the
// cgroupfs driver under the node's own cgroup root, containerd's socket, the API on the node's
// address with a serving certificate for it, x509 (the cluster CA) and webhook authentication,
// webhook authorization, pod logs and volume plugins in the node directory, and eviction and image
// garbage collection loose enough never to fire on a busy shared disk.
func (c *Config) kubeletConfig() ([]byte, error) {
	endpoint := "unix://" + c.socket()
	kc := kubeletConfiguration{
		APIVersion:               "kubelet.config.k8s.io/v1beta1",
		Kind:                     "KubeletConfiguration",
		ContainerRuntimeEndpoint: endpoint,
		ImageServiceEndpoint:     endpoint,
		CgroupDriver:             "cgroupfs",
		CgroupRoot:               c.CgroupRoot,
		CgroupsPerQOS:            true,
		EnforceNodeAllocatable:   []string{"pods"},
		Address:                  c.Host.IP.String(),
		Port:                     KubeletPort,
		HealthzBindAddress:       "127.0.0.1",
		HealthzPort:              10248,
		TLSCertFile:              c.path("pki", "kubelet.crt"),
		TLSPrivateKeyFile:        c.path("pki", "kubelet.key"),
		Authorization:            kubeletAuthz{Mode: "Webhook"},
		PodLogsDir:               c.podLogsDir(),
		VolumePluginDir:          c.path("kubelet-plugins"),
		EvictionHard: map[string]string{
			"memory.available": "1Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%", "imagefs.available": "1%",
		},
		ImageGCHighThresholdPercent: 100,
		ImageGCLowThresholdPercent:  99,
		ClusterDomain:               "cluster.local",
		ResolvConf:                  "/etc/resolv.conf",
	}
	kc.Authentication.X509.ClientCAFile = c.path("pki", "ca.crt")
	kc.Authentication.Webhook.Enabled = true
	data, err := yaml.Marshal(kc)
	if err != nil {
		return nil, fmt.Errorf("node %s: kubelet configuration: %w", c.Name, err)
	}
	return data, nil
}

// kubeletArgs are the kubelet's flags; everything else is in its configuration file.
func (c *Config) kubeletArgs() []string {
	return append([]string{
		"--config=" + c.path("kubelet.yaml"),
		"--kubeconfig=" + c.path("kubelet.kubeconfig"),
		"--hostname-override=" + c.Name,
		"--node-ip=" + c.Host.IP.String(),
		"--root-dir=" + c.kubeletRoot(),
		"--cert-dir=" + c.path("pki"),
		"--v=1",
	}, c.KubeletArgs...)
}
