// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/credwatch/credwatch/pkg/clusterapi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
)

// Cluster API's resources and names the reconcilers read (v1beta1, v1.8), as pkg/clusterapi
// names them for every reader of a management cluster.
var (
	Clusters = clusterapi.ClusterResource
	Machines = clusterapi.MachineResource
	Secrets  = clusterapi.SecretResource
)

const (
	// ClusterFinalizer and MachineFinalizer are the provider's finalizers, named after the
	// kinds as other providers name theirs (dockermachine.infrastructure.cluster.x-k8s.io).
	ClusterFinalizer = "labcluster.infrastructure.cluster.x-k8s.io"
	MachineFinalizer = "labmachine.infrastructure.cluster.x-k8s.io"
	// ClusterNameLabel names a machine's Cluster; ControlPlaneLabel marks control-plane machines.
	ClusterNameLabel  = clusterapi.ClusterNameLabel
	ControlPlaneLabel = clusterapi.ControlPlaneLabel
	// BootstrapFormat is the only bootstrap data format the lab runs.
	BootstrapFormat = "cloud-config"
)

// ownerMachine is the name of the Machine among refs (metadata.ownerReferences), "" if none.
func ownerMachine(u *unstructured.Unstructured) string {
	for _, r := range u.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err == nil && gv.Group == Machines.Group && r.Kind == "Machine" {
			return r.Name
		}
	}
	return ""
}

// clusterName is the Cluster a Machine belongs to: spec.clusterName, else its label, else
// the LabMachine's label.
func clusterName(machine, labMachine *unstructured.Unstructured) string {
	if machine != nil {
		if n, _, _ := unstructured.NestedString(machine.Object, "spec", "clusterName"); n != "" {
			return n
		}
		if n := machine.GetLabels()[ClusterNameLabel]; n != "" {
			return n
		}
	}
	return labMachine.GetLabels()[ClusterNameLabel]
}

// infraRefName is the name of the LabCluster a Cluster's spec.infrastructureRef names, "" if it
// names none or another kind.
func infraRefName(cluster *unstructured.Unstructured) string {
	ref, _, _ := unstructured.NestedStringMap(cluster.Object, "spec", "infrastructureRef")
	if ref["kind"] != "LabCluster" {
		return ""
	}
	return ref["name"]
}

// hostFacts is what the controller knows of a LabMachine's host.
type hostFacts struct {
	Up, Bootstrapped, InLB bool
}

// machineState is what a pass knows: the LabMachine, its owner Machine and Cluster (nil when
// not found) and the host.
func machineState(labMachine, machine, cluster *unstructured.Unstructured, h hostFacts) infra.MachineState {
	s := infra.MachineState{
		Deleting:     labMachine.GetDeletionTimestamp() != nil,
		HostUp:       h.Up,
		Bootstrapped: h.Bootstrapped,
		InLB:         h.InLB,
	}
	// Being deleted, a LabMachine with a providerID had a host, made by this process or one
	// before it: delete it. Otherwise only a host this process holds is up; Hosts.Create
	// returns one a process before made.
	if id, _, _ := unstructured.NestedString(labMachine.Object, "spec", "providerID"); id != "" && s.Deleting {
		s.HostUp = true
	}
	if machine != nil {
		_, s.ControlPlane = machine.GetLabels()[ControlPlaneLabel]
		s.MachineDeleting = machine.GetDeletionTimestamp() != nil
		n, _, _ := unstructured.NestedString(machine.Object, "spec", "bootstrap", "dataSecretName")
		s.Bootstrap = n != ""
	}
	if cluster != nil {
		s.ClusterReady, _, _ = unstructured.NestedBool(cluster.Object, "status", "infrastructureReady")
	}
	return s
}

// bootstrapData is the cloud-config in a bootstrap data Secret: key value, with key format
// cloud-config (a Secret without format is taken as cloud-config, as Cluster API before v0.4
// wrote them).
func bootstrapData(secret *unstructured.Unstructured) ([]byte, error) {
	data, _, _ := unstructured.NestedStringMap(secret.Object, "data")
	decode := func(key string) ([]byte, bool, error) {
		enc, ok := data[key]
		if !ok {
			return nil, false, nil
		}
		v, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return nil, true, fmt.Errorf("bootstrap secret %s: key %s is not base64: %w", secret.GetName(), key, err)
		}
		return v, true, nil
	}
	format, ok, err := decode("format")
	if err != nil {
		return nil, err
	}
	if ok && string(format) != BootstrapFormat {
		return nil, fmt.Errorf("bootstrap secret %s: format %q: the lab runs only %s", secret.GetName(), format, BootstrapFormat)
	}
	value, ok, err := decode("value")
	if err != nil {
		return nil, err
	}
	if !ok || len(value) == 0 {
		return nil, fmt.Errorf("bootstrap secret %s: no value", secret.GetName())
	}
	return value, nil
}

// hasMachineFinalizer reports whether a LabMachine carries the provider's finalizer.
func hasMachineFinalizer(u *unstructured.Unstructured) bool {
	return slices.Contains(u.GetFinalizers(), MachineFinalizer)
}

// setFinalizer adds (on) or removes finalizer f; it reports whether u changed.
func setFinalizer(u *unstructured.Unstructured, f string, on bool) bool {
	if slices.Contains(u.GetFinalizers(), f) == on {
		return false
	}
	fs := slices.DeleteFunc(u.GetFinalizers(), func(x string) bool { return x == f })
	if on {
		fs = append(fs, f)
	}
	u.SetFinalizers(fs)
	return true
}

// key is an object's work-queue key.
func key(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

// splitKey is key's inverse.
func splitKey(k string) (namespace, name string) {
	if ns, n, ok := strings.Cut(k, "/"); ok {
		return ns, n
	}
	return "", k
}
