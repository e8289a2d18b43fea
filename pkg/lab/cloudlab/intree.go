// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/credwatch/credwatch/pkg/lab"
)

// ControlPlaneVM is the VM the control plane runs on (kube-controller-manager's vm-uuid).
const ControlPlaneVM = "master-1"

// Setup is the vSphere side of a cloud lab: the simulator (started by the lab's Prepare hook, on
// the lab network) and the config files it writes.
type Setup struct {
	// Dir holds the cloud config files (one per host, as kubespray renders them).
	Dir string
	// Nodes are the node names the lab will start, in order (node-1, node-2, ...): each gets a VM.
	Nodes []string
	// User and Password are the service account the cluster was deployed with.
	User, Password string
	// Zones writes [Labels] region and zone (the simulator's tag categories) into every
	// cloud_config: the kubelets then read their node's zone from vCenter when they start.
	Zones bool

	// VC is the simulator, once the lab has started it.
	VC *VCenter
}

// ControllerConfig is kube-controller-manager's --cloud-config (in-tree era).
func (s *Setup) ControllerConfig() string { return filepath.Join(s.Dir, "cloud_config") }

// NodeConfig is node's --cloud-config (in-tree era).
func (s *Setup) NodeConfig(node string) string { return filepath.Join(s.Dir, "cloud_config."+node) }

// InTree is the lab's CloudOptions for the in-tree era: kube-controller-manager and kubelets of
// lab.InTreeCloudVersion with --cloud-provider=vsphere and kubespray's cloud_config.
func (s *Setup) InTree() *lab.CloudOptions {
	return &lab.CloudOptions{
		Provider: lab.CloudVSphere, Version: lab.InTreeCloudVersion,
		Config: s.ControllerConfig(), NodeConfig: s.NodeConfig("NAME"),
		PrepareHosts: func(ctx context.Context, l *lab.Lab) error {
			if err := s.start(ctx, l); err != nil {
				return err
			}
			return s.WriteInTreeConfigs(s.Password)
		},
	}
}

func (s *Setup) start(ctx context.Context, l *lab.Lab) error {
	if l.Network() == nil {
		return errors.New("cloud lab: needs the hosts network")
	}
	vc, err := StartVCenter(ctx, l.Network().Gateway(), s.User, s.Password, append([]string{ControlPlaneVM}, s.Nodes...))
	if err != nil {
		return err
	}
	s.VC = vc
	return nil
}

// WriteInTreeConfigs (re)writes every host's cloud_config with password.
func (s *Setup) WriteInTreeConfigs(password string) error {
	if err := writeFile(s.ControllerConfig(), KubesprayConfig(s.VC, password, s.VC.VMUUID(ControlPlaneVM), s.Zones)); err != nil {
		return err
	}
	for _, n := range s.Nodes {
		if err := writeFile(s.NodeConfig(n), KubesprayConfig(s.VC, password, s.VC.VMUUID(n), s.Zones)); err != nil {
			return err
		}
	}
	return nil
}

// Close stops the simulator.
func (s *Setup) Close() {
	if s.VC != nil {
		s.VC.Close()
	}
}

// NodeNames are the names the lab gives its first n nodes.
func NodeNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("node-%d", i+1)
	}
	return out
}
