// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"fmt"
	"strings"
)

// Cloud providers a lab can run with (CloudOptions.Provider).
const (
	// CloudVSphere is the in-tree vSphere provider: kube-controller-manager and every kubelet get
	// --cloud-provider=vsphere --cloud-config=<file>, as kubespray starts them (Version
	// InTreeCloudVersion).
	CloudVSphere = "vsphere"
	// CloudExternal is a cloud controller manager's era: kube-controller-manager and the kubelets
	// get --cloud-provider=external; the caller runs the cloud controller manager.
	CloudExternal = "external"
)

// CloudOptions runs the lab's controller manager and kubelets with a cloud provider.
type CloudOptions struct {
	// Provider is CloudVSphere or CloudExternal.
	Provider string `json:"provider"`
	// Version is the kube-controller-manager and kubelet line (default: the lab's Version).
	Version string `json:"version,omitempty"`
	// Config is kube-controller-manager's --cloud-config file (in-tree providers).
	Config string `json:"config,omitempty"`
	// NodeConfig is the kubelet's --cloud-config file of node NAME, with "NAME" replaced (a
	// per-host file, as kubespray renders it; in-tree providers).
	NodeConfig string `json:"nodeConfig,omitempty"`
	// PrepareHosts, when set, runs once the lab network is up and before the apiservers start:
	// it can start the cloud endpoint on the lab network (Lab.Network().Gateway()) and write the
	// config files the apiservers read.
	PrepareHosts func(ctx context.Context, l *Lab) error `json:"-"`
	// Prepare, when set, runs once the apiservers are up and before the controller manager and
	// nodes start: it can create the objects the cloud's consumers read.
	Prepare func(ctx context.Context, l *Lab) error `json:"-"`
}

// apiserverArgs are the cloud flags of a kube-apiserver of version: an in-tree provider's, as
// kubespray passes them, when the apiserver is of the provider's own line (newer apiservers have
// no in-tree provider to name). The apiserver only reads the file's bytes, for admission plugins.
func (c *CloudOptions) apiserverArgs(version string) []string {
	if c == nil || c.Provider == CloudExternal || c.Version != "" && c.Version != version {
		return nil
	}
	return []string{"--cloud-provider=" + c.Provider, "--cloud-config=" + c.Config, inTreeGates}
}

// in-tree providers on 1.29 are behind beta gates that default to disabled.
const inTreeGates = "--feature-gates=DisableCloudProviders=false,DisableKubeletCloudCredentialProviders=false"

func (c *CloudOptions) version(def string) string {
	if c == nil || c.Version == "" {
		return def
	}
	return c.Version
}

func (c *CloudOptions) validate() error {
	if c == nil {
		return nil
	}
	switch c.Provider {
	case CloudExternal:
		return nil
	case CloudVSphere:
		if c.Config == "" || c.NodeConfig == "" {
			return fmt.Errorf("cloud provider %s: the controller manager's and the nodes' --cloud-config files are not set", c.Provider)
		}
		return nil
	}
	return fmt.Errorf("unknown cloud provider %q (want %q or %q)", c.Provider, CloudVSphere, CloudExternal)
}

// controllerManagerArgs are the cloud flags of kube-controller-manager.
func (c *CloudOptions) controllerManagerArgs() []string {
	switch {
	case c == nil:
		return nil
	case c.Provider == CloudExternal:
		return []string{"--cloud-provider=external"}
	}
	return []string{"--cloud-provider=" + c.Provider, "--cloud-config=" + c.Config, inTreeGates}
}

// kubeletArgs are the cloud flags of node's kubelet.
func (c *CloudOptions) kubeletArgs(node string) []string {
	switch {
	case c == nil:
		return nil
	case c.Provider == CloudExternal:
		return []string{"--cloud-provider=external"}
	}
	return []string{"--cloud-provider=" + c.Provider, "--cloud-config=" + c.NodeConfigFile(node), inTreeGates}
}

// NodeConfigFile is node's --cloud-config file.
func (c *CloudOptions) NodeConfigFile(node string) string {
	return strings.ReplaceAll(c.NodeConfig, "NAME", node)
}
