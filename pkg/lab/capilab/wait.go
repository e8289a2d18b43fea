// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/clusterapi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
	"github.com/credwatch/credwatch/pkg/lab/capi/workload"
)

// Machine is one control-plane Machine as Cluster API reports it.
type Machine struct {
	Name       string `json:"name"`
	Phase      string `json:"phase"`
	ProviderID string `json:"providerID,omitempty"`
	Node       string `json:"node,omitempty"`
	Deleting   bool   `json:"deleting,omitempty"`
}

// ControlPlane is the KubeadmControlPlane's status and its machines.
type ControlPlane struct {
	Initialized   bool      `json:"initialized"`
	Replicas      int64     `json:"replicas"`
	ReadyReplicas int64     `json:"readyReplicas"`
	Updated       int64     `json:"updatedReplicas"`
	Machines      []Machine `json:"machines"`
	// Conditions are the KubeadmControlPlane's status.conditions in the release's API version.
	Conditions []Condition `json:"conditions,omitempty"`
}

// String is a one-line summary for progress lines.
func (cp ControlPlane) String() string {
	var ms []string
	for _, m := range cp.Machines {
		s := m.Name + "=" + m.Phase
		if m.Deleting {
			s += "(deleting)"
		}
		ms = append(ms, s)
	}
	return fmt.Sprintf("initialized=%v replicas=%d ready=%d updated=%d machines=[%s]", cp.Initialized, cp.Replicas,
		cp.ReadyReplicas, cp.Updated, strings.Join(ms, " "))
}

// ControlPlane reads the KubeadmControlPlane and its Machines.
func (c *Lab) ControlPlane(ctx context.Context) (ControlPlane, error) {
	cl := c.cfg.Cluster
	kcp, err := c.kcp().Get(ctx, cl.ControlPlaneName(), metav1.GetOptions{})
	if err != nil {
		return ControlPlane{}, fmt.Errorf("capi lab: read KubeadmControlPlane %s: %w", cl.ControlPlaneName(), err)
	}
	var cp ControlPlane
	cp.Conditions = clusterapi.Conditions(kcp)
	cp.Replicas, _, _ = unstructured.NestedInt64(kcp.Object, "status", "replicas")
	cp.ReadyReplicas, _, _ = unstructured.NestedInt64(kcp.Object, "status", "readyReplicas")
	if c.v1beta2() {
		cp.Initialized, _, _ = unstructured.NestedBool(kcp.Object, "status", "initialization", "controlPlaneInitialized")
		cp.Updated, _, _ = unstructured.NestedInt64(kcp.Object, "status", "upToDateReplicas")
	} else {
		cp.Initialized, _, _ = unstructured.NestedBool(kcp.Object, "status", "initialized")
		cp.Updated, _, _ = unstructured.NestedInt64(kcp.Object, "status", "updatedReplicas")
	}
	ms, err := c.machines().List(ctx, metav1.ListOptions{
		LabelSelector: "cluster.x-k8s.io/cluster-name=" + cl.Name + ",cluster.x-k8s.io/control-plane",
	})
	if err != nil {
		return ControlPlane{}, fmt.Errorf("capi lab: list control-plane Machines: %w", err)
	}
	for _, m := range ms.Items {
		phase, _, _ := unstructured.NestedString(m.Object, "status", "phase")
		pid, _, _ := unstructured.NestedString(m.Object, "spec", "providerID")
		nodeName, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
		cp.Machines = append(cp.Machines, Machine{Name: m.GetName(), Phase: phase, ProviderID: pid, Node: nodeName,
			Deleting: m.GetDeletionTimestamp() != nil})
	}
	sort.Slice(cp.Machines, func(i, j int) bool { return cp.Machines[i].Name < cp.Machines[j].Name })
	return cp, nil
}

// WaitControlPlane waits until the control plane is initialized with replicas machines, every one
// Running and ready and none being deleted, logging each change of state.
func (c *Lab) WaitControlPlane(ctx context.Context, replicas int) (ControlPlane, error) {
	last := ""
	for {
		cp, err := c.ControlPlane(ctx)
		if err == nil {
			if s := cp.String(); s != last {
				fmt.Fprintf(c.cfg.Log, "capi lab: control plane %s\n", s)
				last = s
			}
			if cp.done(replicas) {
				return cp, nil
			}
		}
		select {
		case <-ctx.Done():
			return cp, fmt.Errorf("capi lab: control plane not ready with %d machines: %w (last: %s; error: %v)", replicas, ctx.Err(), last, err)
		case <-time.After(2 * time.Second):
		}
	}
}

func (cp ControlPlane) done(replicas int) bool {
	if !cp.Initialized || cp.ReadyReplicas != int64(replicas) || len(cp.Machines) != replicas {
		return false
	}
	for _, m := range cp.Machines {
		if m.Phase != "Running" || m.Deleting {
			return false
		}
	}
	return true
}

// WorkloadKubeconfig is the admin kubeconfig Cluster API wrote for the workload cluster (the
// Secret <cluster>-kubeconfig, key value).
func (c *Lab) WorkloadKubeconfig(ctx context.Context) ([]byte, error) {
	cl := c.cfg.Cluster
	s, err := c.dyn.Resource(controller.Secrets).Namespace(namespace(cl)).Get(ctx, cl.Name+"-kubeconfig", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("capi lab: read Secret %s-kubeconfig: %w", cl.Name, err)
	}
	v, _, _ := unstructured.NestedString(s.Object, "data", "value")
	data, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(data) == 0 {
		return nil, fmt.Errorf("capi lab: Secret %s-kubeconfig has no kubeconfig in value", cl.Name)
	}
	return data, nil
}

// Condition is one of a KubeadmControlPlane's status.conditions, as check reports them.
type Condition = check.Condition

func namespace(c workload.Config) string {
	if c.Namespace == "" {
		return "default"
	}
	return c.Namespace
}
