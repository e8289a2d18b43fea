// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package infra is the lab's Cluster API infrastructure provider (contract v1beta1): LabCluster,
// whose control-plane endpoint is a lab load balancer configurable as cloud ones are (health
// check, when a machine leaves it), and LabMachine, a lab host that runs its bootstrap data
// (package cloudinit) and joins the workload cluster. This file holds the types as the
// provider reads and writes them; crds/ holds their CustomResourceDefinitions.
package infra

import (
	"crypto/tls"
	"fmt"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
)

// Group and Version of the provider's kinds; ContractLabel is the label every CRD carries so
// that Cluster API finds the version of a contract (util/conversion/conversion.go:90). The CRDs
// carry ContractLabelV1beta2 too: the provider serves both contracts (status.ready and
// status.initialization.provisioned), and Cluster API v1.14 reads the newest it finds
// (internal/contract/version.go, GetLatestContractAndAPIVersionFromContract).
const (
	Group         = "infrastructure.cluster.x-k8s.io"
	Version       = "v1alpha1"
	ContractLabel = "cluster.x-k8s.io/v1beta1"
	// ContractLabelV1beta2 marks the version serving the v1beta2 contract (Cluster API v1.11 on).
	ContractLabelV1beta2 = "cluster.x-k8s.io/v1beta2"
)

// ProviderIDPrefix starts every LabMachine's providerID: lab://HOST.
const ProviderIDPrefix = "lab://"

// Deregistration says when a machine's apiserver leaves the LabCluster's load balancer.
type Deregistration string

const (
	// OnMachineDelete: only when the LabMachine is deleted, after drain and the pre-terminate
	// hooks (cluster-api-provider-aws before v2.4.0, #4697): the old member stays in rotation
	// from its etcd removal until then.
	OnMachineDelete Deregistration = "on-machine-delete"
	// OnDrain: as soon as the Machine starts draining (its deletionTimestamp is set).
	OnDrain Deregistration = "on-drain"
)

// LoadBalancer is how the LabCluster's balancer treats its control-plane members.
type LoadBalancer struct {
	HealthCheck    lb.HealthCheck `json:"healthCheck,omitempty"`
	Deregistration Deregistration `json:"deregistration,omitempty"`
	// IntervalSeconds between checks and UnhealthyThreshold failures in a row before a member
	// is out, as a cloud load balancer counts them (CAPA's classic ELB: every 10 s, out after 3).
	IntervalSeconds    int `json:"intervalSeconds,omitempty"`
	UnhealthyThreshold int `json:"unhealthyThreshold,omitempty"`
}

// Defaults of LoadBalancer: a cloud-like check, not the lab's own 1-s /readyz.
const (
	DefaultIntervalSeconds    = 10
	DefaultUnhealthyThreshold = 3
)

// Complete fills the defaults and checks the values.
func (b *LoadBalancer) Complete() error {
	if b.HealthCheck == "" {
		b.HealthCheck = lb.CheckHTTPSReadyz
	}
	if _, err := lb.NewCheck(b.HealthCheck, nil); err != nil {
		return err
	}
	switch b.Deregistration {
	case "":
		b.Deregistration = OnDrain
	case OnDrain, OnMachineDelete:
	default:
		return fmt.Errorf("load-balancer deregistration %q: want %s or %s", b.Deregistration, OnMachineDelete, OnDrain)
	}
	if b.IntervalSeconds == 0 {
		b.IntervalSeconds = DefaultIntervalSeconds
	}
	if b.UnhealthyThreshold == 0 {
		b.UnhealthyThreshold = DefaultUnhealthyThreshold
	}
	if b.IntervalSeconds < 1 || b.IntervalSeconds > 300 || b.UnhealthyThreshold < 1 || b.UnhealthyThreshold > 10 {
		return fmt.Errorf("load-balancer check every %d s, out after %d failures: want 1..300 s and 1..10", b.IntervalSeconds, b.UnhealthyThreshold)
	}
	return nil
}

// Interval is IntervalSeconds as a duration.
func (b LoadBalancer) Interval() time.Duration { return time.Duration(b.IntervalSeconds) * time.Second }

// APIEndpoint is Cluster API's host and port of the control plane.
type APIEndpoint struct {
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// LabClusterSpec is the desired LabCluster.
type LabClusterSpec struct {
	ControlPlaneEndpoint APIEndpoint  `json:"controlPlaneEndpoint,omitzero"`
	LoadBalancer         LoadBalancer `json:"loadBalancer,omitzero"`
}

// LabClusterStatus is what the provider reports: Ready once the load balancer listens.
type LabClusterStatus struct {
	Ready          bool           `json:"ready"`
	Initialization Initialization `json:"initialization,omitzero"`
}

// Initialization is the v1beta2 contract's status.initialization.
type Initialization struct {
	Provisioned bool `json:"provisioned,omitempty"`
}

// LabMachineSpec is the desired LabMachine; ProviderID is set by the provider.
type LabMachineSpec struct {
	ProviderID string `json:"providerID,omitempty"`
}

// MachineAddress is one of a LabMachine's addresses (InternalIP, Hostname).
type MachineAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// LabMachineStatus is what the provider reports of the host.
type LabMachineStatus struct {
	Ready          bool             `json:"ready"`
	Initialization Initialization   `json:"initialization,omitzero"`
	Addresses      []MachineAddress `json:"addresses,omitempty"`
	FailureReason  string           `json:"failureReason,omitempty"`
	FailureMessage string           `json:"failureMessage,omitempty"`
}

// ProviderID is the providerID of the machine on host.
func ProviderID(host string) string { return ProviderIDPrefix + host }

// BalancerConfig is the lab balancer's configuration for b (completed first): its check with
// tlsConf (trusting the workload cluster's CA), checked every Interval, a member out after
// UnhealthyThreshold failures in a row. Members stay in rotation when the check fails only in
// lb.All mode; a LabCluster's balancer skips failing members, as cloud ones do.
func (b LoadBalancer) BalancerConfig(tlsConf *tls.Config) (lb.Config, error) {
	if err := b.Complete(); err != nil {
		return lb.Config{}, err
	}
	check, err := lb.NewCheck(b.HealthCheck, tlsConf)
	if err != nil {
		return lb.Config{}, err
	}
	return lb.Config{Mode: lb.Ready, Check: check, Interval: b.Interval(), UnhealthyAfter: b.UnhealthyThreshold, HealthyAfter: 1}, nil
}
