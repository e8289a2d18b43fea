// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package infra

// Step is one thing the LabMachine reconciler does in a pass.
type Step string

const (
	WaitCluster     Step = "wait-cluster"     // Cluster.status.infrastructureReady is not true yet
	WaitBootstrap   Step = "wait-bootstrap"   // Machine.spec.bootstrap.dataSecretName is not set yet
	CreateHost      Step = "create-host"      // a lab host: netns, containerd, kubelet; run the bootstrap data
	Register        Step = "register"         // add the host's apiserver to the LabCluster's balancer
	Deregister      Step = "deregister"       // take it out of the balancer
	DeleteHost      Step = "delete-host"      // stop the kubelet, containers, containerd; remove the netns
	RemoveFinalizer Step = "remove-finalizer" // the LabMachine may go
)

// MachineState is what one reconcile pass of a LabMachine knows.
type MachineState struct {
	ControlPlane bool // the Machine is a control-plane machine
	ClusterReady bool // Cluster.status.infrastructureReady
	Bootstrap    bool // the Machine names its bootstrap data Secret
	HostUp       bool // the lab host exists
	Bootstrapped bool // the host wrote the bootstrap sentinel (progress lines; no step waits for it)
	InLB         bool // its apiserver is in the LabCluster's balancer
	// MachineDeleting: the owning Machine has a deletionTimestamp, so Cluster API drains it,
	// then runs its pre-terminate hooks, then deletes the LabMachine.
	MachineDeleting bool
	// Deleting: the LabMachine itself has a deletionTimestamp (after drain and the hooks,
	// internal/controllers/machine/machine_controller.go:464 in v1.8).
	Deleting bool
}

// Plan returns the steps of one pass, in order. Deregistration decides when a control-plane
// machine leaves the balancer: OnDrain as soon as its Machine is being deleted, OnMachineDelete
// only when the LabMachine goes — the window in which a member whose etcd member KCP already
// removed (v1.8.1 removes it before the Machine is deleted) still gets clients' requests.
func Plan(s MachineState, d Deregistration) []Step {
	if s.Deleting {
		var out []Step
		if s.InLB {
			out = append(out, Deregister)
		}
		if s.HostUp {
			out = append(out, DeleteHost)
		}
		return append(out, RemoveFinalizer)
	}
	if s.MachineDeleting {
		if s.ControlPlane && s.InLB && d == OnDrain {
			return []Step{Deregister}
		}
		return nil
	}
	switch {
	case !s.ClusterReady:
		return []Step{WaitCluster}
	case !s.Bootstrap:
		return []Step{WaitBootstrap}
	case !s.HostUp:
		return []Step{CreateHost}
	case s.ControlPlane && !s.InLB:
		// As a cloud provider attaches an instance to its load balancer once it runs (CAPA's
		// reconcileLBAttachment), not once kubeadm is done: kubeadm init reaches its own
		// apiserver through the control-plane endpoint. The balancer's check keeps it out of
		// rotation until it answers.
		return []Step{Register}
	}
	return nil
}
