// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/report"
)

// ClusterAPI is the Cluster API view of the checked cluster, read by the caller from the
// management cluster (check --capi-cluster): which Machine each member runs on, its phase, and the
// Cluster API version that rolls it. check never reads a management cluster itself.
type ClusterAPI struct {
	// Cluster is NAMESPACE/NAME of the Cluster object.
	Cluster string `json:"cluster"`
	// Version is the Cluster API version of the control-plane provider ("" unknown): it decides
	// the order of a roll (etcd member removed before the drain up to v1.8.1).
	Version string `json:"version,omitempty"`
	// Machines are the control plane's Machines.
	Machines []Machine `json:"machines"`
	// ControlPlane is the KubeadmControlPlane's view of the roll (nil: not read, or the Cluster's
	// control plane is not a KubeadmControlPlane).
	ControlPlane *ControlPlaneStatus `json:"controlPlane,omitempty"`
}

// ControlPlaneStatus is a KubeadmControlPlane's status as a roll sees it.
type ControlPlaneStatus struct {
	Name     string `json:"name"` // NAMESPACE/NAME
	Replicas int64  `json:"replicas"`
	// UpToDate is status.upToDateReplicas (v1beta2), else status.updatedReplicas (v1beta1).
	UpToDate   int64       `json:"upToDate"`
	Conditions []Condition `json:"conditions,omitempty"`
}

// Condition is one of status.conditions (metav1.Condition in v1beta2, Cluster API's own in
// v1beta1: the same four fields).
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Machine is one Cluster API Machine of the control plane.
type Machine struct {
	Name     string `json:"name"`
	Phase    string `json:"phase,omitempty"` // status.phase: Provisioning, Running, Deleting, …
	Deleting bool   `json:"deleting,omitempty"`
	NodeName string `json:"nodeName,omitempty"` // status.nodeRef.name
	// Addresses are status.addresses (IPs and host names).
	Addresses  []string `json:"addresses,omitempty"`
	ProviderID string   `json:"providerID,omitempty"`
	Version    string   `json:"version,omitempty"` // spec.version, the Kubernetes version
	// Member is the name of the member that runs on it ("" when none was found: not serving yet,
	// or not reachable by credwatch).
	Member string `json:"member,omitempty"`
	// UpToDate is the v1beta2 Machine's UpToDate condition (nil: not reported, as in v1beta1).
	UpToDate *bool `json:"upToDate,omitempty"`
}

// relateMachines names, for each member, the Machine it runs on (Member.Machine) and, for each
// Machine, its member. A member matches a Machine when its static pod is kube-apiserver-<node> of
// the Machine's node, when its name is the node's (a kubeadm member named by its serving
// certificate), or when its address is one of the Machine's.
func relateMachines(members []Member, ca *ClusterAPI) {
	if ca == nil {
		return
	}
	for i := range ca.Machines {
		ma := &ca.Machines[i]
		for j := range members {
			m := &members[j]
			if m.Machine == "" && machineRuns(*ma, m.Endpoint) {
				m.Machine, ma.Member = ma.Name, m.Name
				break
			}
		}
	}
}

func machineRuns(ma Machine, e Endpoint) bool {
	if ma.NodeName != "" {
		node := ma.NodeName
		if e.StaticPod == "kube-system/kube-apiserver-"+node || e.Name == "kube-apiserver-"+node || e.Name == node {
			return true
		}
	}
	u, err := url.Parse(e.URL)
	if err != nil || u.Hostname() == "" {
		return false
	}
	host := u.Hostname()
	return net.ParseIP(host) != nil && slices.ContainsFunc(ma.Addresses, func(a string) bool { return strings.EqualFold(a, host) })
}

// clone copies ca deeply, so that a fetch's relation never touches the caller's.
func (ca *ClusterAPI) clone() *ClusterAPI {
	if ca == nil {
		return nil
	}
	out := *ca
	out.Machines = make([]Machine, len(ca.Machines))
	for i, m := range ca.Machines {
		m.Addresses = slices.Clone(m.Addresses)
		if m.UpToDate != nil {
			u := *m.UpToDate
			m.UpToDate = &u
		}
		out.Machines[i] = m
	}
	if ca.ControlPlane != nil {
		cp := *ca.ControlPlane
		cp.Conditions = slices.Clone(cp.Conditions)
		out.ControlPlane = &cp
	}
	return &out
}

// writeMachines is the table's CLUSTER API MACHINES section: each Machine of the control plane
// and the member that runs on it.
func writeMachines(w io.Writer, o report.TableOptions, ca *ClusterAPI) error {
	if ca == nil {
		return nil
	}
	version := ca.Version
	if version == "" {
		version = "version unknown"
	}
	fmt.Fprintf(w, "\nCLUSTER API MACHINES (cluster %s, Cluster API %s)\n", ca.Cluster, version)
	if cp := ca.ControlPlane; cp != nil {
		fmt.Fprintf(w, "  KubeadmControlPlane %s: %d of %d machines up to date", cp.Name, cp.UpToDate, cp.Replicas)
		for _, c := range cp.Conditions {
			if blocksRoll(c) {
				fmt.Fprintf(w, "; roll blocked: %s=%s", c.Type, c.Status)
			}
		}
		fmt.Fprintln(w)
	}
	if len(ca.Machines) == 0 {
		fmt.Fprintln(w, "  none: the Cluster has no control-plane Machine")
		return nil
	}
	g := report.NewGrid("  ", report.Col{Name: "MACHINE"}, report.Col{Name: "PHASE"}, report.Col{Name: "NODE"},
		report.Col{Name: "VERSION"}, report.Col{Name: "PROVIDER ID", Wide: true}, report.Col{Name: "MEMBER"})
	for _, m := range ca.Machines {
		phase := orDash(m.Phase)
		if m.Deleting && m.Phase != "Deleting" {
			phase += " (deleting)"
		}
		g.Row(m.Name, phase, orDash(m.NodeName), orDash(m.Version), orDash(m.ProviderID), orDash(m.Member))
	}
	return g.Write(w, o)
}
