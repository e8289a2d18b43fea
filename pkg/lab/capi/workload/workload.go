// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package workload writes the Cluster API objects of one lab workload cluster (issue 23): a
// Cluster whose infrastructure is a LabCluster (its control-plane endpoint a lab load balancer,
// configured as a cloud one) and whose control plane is a KubeadmControlPlane of LabMachines, with
// the kubeadm settings every lab host needs (kubeadm.LabSettings) in its KubeadmConfigSpec. The
// objects are unstructured, in Cluster API v1beta1 as v1.8 serves it or in v1beta2 as v1.14
// serves it (Config.API): credwatch does not link Cluster API's Go types.
package workload

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm"
	"github.com/credwatch/credwatch/pkg/lab/node"
)

// API versions of the objects: Cluster API's in v1beta1 (ClusterAPIVersion and
// ControlPlaneAPIVersion; Config.API chooses), the lab provider's in its one version.
const (
	ClusterAPIVersion      = "cluster.x-k8s.io/v1beta1"
	ControlPlaneAPIVersion = "controlplane.cluster.x-k8s.io/v1beta1"
	BootstrapAPIVersion    = "bootstrap.cluster.x-k8s.io/v1beta1"
	InfraAPIVersion        = infra.Group + "/" + infra.Version
)

// The API versions Config.API takes.
const (
	V1Beta1 = "v1beta1"
	V1Beta2 = "v1beta2"
)

// Config is one workload cluster.
type Config struct {
	Name      string // the Cluster's name, e.g. "w1"; the KubeadmControlPlane is NAME-control-plane
	Namespace string // default "default"
	Version   string // Kubernetes version of the control plane; default kubeadm.Version
	// API is the Cluster API version the objects are written in: V1Beta1 (default, v1.8) or
	// V1Beta2 (v1.11 on: references by apiGroup, extraArgs as name/value lists, spec.rollout).
	API      string
	Replicas int // control-plane machines; default 1
	// Workers is the replicas of the MachineDeployment NAME-md-0 (kubeadm join, no control
	// plane); 0 makes none (the lab's workload clusters have had no worker).
	Workers int
	// MaxSurge is the rolling update's surge (KCP accepts 0 or 1); default 1.
	MaxSurge int
	// LoadBalancer is the LabCluster's balancer (health check, deregistration).
	LoadBalancer infra.LoadBalancer
	// PodCIDR and ServiceCIDR of the workload cluster; defaults 10.244.0.0/16 and 10.96.0.0/16.
	PodCIDR, ServiceCIDR string
	// RolloutAfter, when set, is the KubeadmControlPlane's spec.rolloutAfter: every machine
	// created before it is replaced.
	RolloutAfter time.Time
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,14}[a-z0-9])?$`)

// ControlPlaneName is the KubeadmControlPlane's (and its LabMachineTemplate's) name.
func (c Config) ControlPlaneName() string { return c.Name + "-control-plane" }

// complete fills the defaults and checks the values. Names are kept short: machine names are
// NAME-control-plane-XXXXX, and a lab host's name is at most 42 characters.
func (c *Config) complete() error {
	if !nameRE.MatchString(c.Name) {
		return fmt.Errorf("workload cluster name %q: want a lower-case DNS label of at most 16 characters", c.Name)
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.Version == "" {
		c.Version = kubeadm.Version
	}
	if c.API == "" {
		c.API = V1Beta1
	}
	if c.API != V1Beta1 && c.API != V1Beta2 {
		return fmt.Errorf("workload cluster %s: Cluster API version %q: want %s or %s", c.Name, c.API, V1Beta1, V1Beta2)
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	// KubeadmControlPlane refuses an even number with stacked etcd.
	if c.Replicas < 1 || c.Replicas > 5 || c.Replicas%2 == 0 {
		return fmt.Errorf("workload cluster %s: %d control-plane replicas: want 1, 3 or 5", c.Name, c.Replicas)
	}
	if c.Workers < 0 || c.Workers > 3 {
		return fmt.Errorf("workload cluster %s: %d workers: want 0 to 3", c.Name, c.Workers)
	}
	if c.MaxSurge < 0 || c.MaxSurge > 1 {
		return fmt.Errorf("workload cluster %s: max surge %d: want 0 or 1", c.Name, c.MaxSurge)
	}
	if c.PodCIDR == "" {
		c.PodCIDR = "10.244.0.0/16"
	}
	if c.ServiceCIDR == "" {
		c.ServiceCIDR = "10.96.0.0/16"
	}
	return c.LoadBalancer.Complete()
}

// Objects returns, in the order to create them, the LabMachineTemplate, the KubeadmControlPlane,
// the LabCluster and the Cluster, then, with Workers, the workers' LabMachineTemplate,
// KubeadmConfigTemplate and MachineDeployment.
func Objects(c Config) ([]*unstructured.Unstructured, error) {
	if c.MaxSurge == 0 {
		c.MaxSurge = 1
	}
	if err := c.complete(); err != nil {
		return nil, err
	}
	lb := map[string]any{
		"healthCheck": string(c.LoadBalancer.HealthCheck), "deregistration": string(c.LoadBalancer.Deregistration),
		"intervalSeconds": int64(c.LoadBalancer.IntervalSeconds), "unhealthyThreshold": int64(c.LoadBalancer.UnhealthyThreshold),
	}
	cp := c.ControlPlaneName()
	objs := []*unstructured.Unstructured{
		c.object(InfraAPIVersion, "LabMachineTemplate", cp, map[string]any{"template": map[string]any{"spec": map[string]any{}}}),
		c.kubeadmControlPlane(),
		c.object(InfraAPIVersion, "LabCluster", c.Name, map[string]any{"loadBalancer": lb}),
		c.object(c.apiVersion(ClusterAPIVersion), "Cluster", c.Name, map[string]any{
			"clusterNetwork": map[string]any{
				"pods":     map[string]any{"cidrBlocks": []any{c.PodCIDR}},
				"services": map[string]any{"cidrBlocks": []any{c.ServiceCIDR}},
			},
			"infrastructureRef": c.ref(InfraAPIVersion, "LabCluster", c.Name),
			"controlPlaneRef":   c.ref(c.apiVersion(ControlPlaneAPIVersion), "KubeadmControlPlane", cp),
		}),
	}
	if c.Workers > 0 {
		objs = append(objs, c.workerObjects()...)
	}
	return objs, nil
}

// WorkersName is the workers' MachineDeployment (and its templates') name.
func (c Config) WorkersName() string { return c.Name + "-md-0" }

// workerObjects are the workers: a LabMachineTemplate, a KubeadmConfigTemplate that joins with
// the lab's settings, and a MachineDeployment of Workers machines.
func (c Config) workerObjects() []*unstructured.Unstructured {
	md := c.WorkersName()
	bootstrapRef := c.ref(c.apiVersion(BootstrapAPIVersion), "KubeadmConfigTemplate", md)
	infraRef := c.ref(InfraAPIVersion, "LabMachineTemplate", md)
	template := map[string]any{"clusterName": c.Name, "version": c.Version,
		"bootstrap": map[string]any{"configRef": bootstrapRef}, "infrastructureRef": infraRef}
	labels := map[string]any{"cluster.x-k8s.io/cluster-name": c.Name, "cluster.x-k8s.io/deployment-name": md}
	return []*unstructured.Unstructured{
		c.object(InfraAPIVersion, "LabMachineTemplate", md, map[string]any{"template": map[string]any{"spec": map[string]any{}}}),
		c.object(c.apiVersion(BootstrapAPIVersion), "KubeadmConfigTemplate", md, map[string]any{"template": map[string]any{"spec": map[string]any{
			"format":            "cloud-config",
			"joinConfiguration": map[string]any{"nodeRegistration": c.nodeRegistration(), "patches": c.patches()},
		}}}),
		c.object(c.apiVersion(ClusterAPIVersion), "MachineDeployment", md, map[string]any{
			"clusterName": c.Name, "replicas": int64(c.Workers),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": template},
		}),
	}
}

// apiVersion is one of Cluster API's v1beta1 API versions in c.API.
func (c Config) apiVersion(v1beta1 string) string {
	if c.API == V1Beta2 {
		return strings.TrimSuffix(v1beta1, V1Beta1) + V1Beta2
	}
	return v1beta1
}

func (c Config) object(apiVersion, kind, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": c.Namespace, "labels": map[string]any{"cluster.x-k8s.io/cluster-name": c.Name}},
		"spec":     spec,
	}}
}

// ref is a reference to an object: by apiVersion in v1beta1, by apiGroup in v1beta2
// (ContractVersionedObjectReference: the version is the contract's, resolved by Cluster API).
func (c Config) ref(apiVersion, kind, name string) map[string]any {
	if c.API == V1Beta2 {
		group, _, _ := strings.Cut(apiVersion, "/")
		return map[string]any{"apiGroup": group, "kind": kind, "name": name}
	}
	return map[string]any{"apiVersion": apiVersion, "kind": kind, "name": name}
}

// args are kubeadm extra arguments: a map in v1beta1, a list of {name, value} in v1beta2
// (kubeadm v1beta4's shape), sorted by name.
func (c Config) args(m map[string]string) any {
	if c.API != V1Beta2 {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]any, 0, len(m))
	for _, k := range names {
		out = append(out, map[string]any{"name": k, "value": m[k]})
	}
	return out
}

// kubeadmControlPlane is the KubeadmControlPlane: LabMachines from the template, a rolling update
// with the configured surge, the CoreDNS and kube-proxy addons skipped, and the lab's kubeadm
// settings for init and join.
func (c Config) kubeadmControlPlane() *unstructured.Unstructured {
	lab := kubeadm.LabSettings(node.KubeadmPatchesDir)
	nodeReg, patches := c.nodeRegistration(), c.patches()
	infraRef := c.ref(InfraAPIVersion, "LabMachineTemplate", c.ControlPlaneName())
	spec := map[string]any{
		"replicas": int64(c.Replicas),
		"version":  c.Version,
		"kubeadmConfigSpec": map[string]any{
			"format":               "cloud-config",
			"clusterConfiguration": map[string]any{"controllerManager": map[string]any{"extraArgs": c.args(lab.ControllerManagerArgs)}},
			"initConfiguration": map[string]any{
				"nodeRegistration": nodeReg, "skipPhases": list(lab.SkipPhases), "patches": patches,
			},
			"joinConfiguration": map[string]any{"nodeRegistration": nodeReg, "patches": patches},
		},
	}
	strategy := map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": int64(c.MaxSurge)}}
	if c.API == V1Beta2 {
		spec["machineTemplate"] = map[string]any{"spec": map[string]any{"infrastructureRef": infraRef}}
		rollout := map[string]any{"strategy": strategy}
		if !c.RolloutAfter.IsZero() {
			rollout["after"] = c.RolloutAfter.UTC().Format(time.RFC3339)
		}
		spec["rollout"] = rollout
	} else {
		spec["machineTemplate"] = map[string]any{"infrastructureRef": infraRef}
		spec["rolloutStrategy"] = strategy
		if !c.RolloutAfter.IsZero() {
			spec["rolloutAfter"] = c.RolloutAfter.UTC().Format(time.RFC3339)
		}
	}
	o := c.object(c.apiVersion(ControlPlaneAPIVersion), "KubeadmControlPlane", c.ControlPlaneName(), spec)
	ann := map[string]any{}
	for k, v := range kubeadm.SkipAnnotations {
		ann[k] = v
	}
	o.Object["metadata"].(map[string]any)["annotations"] = ann
	return o
}

// nodeRegistration is every lab host's kubeadm nodeRegistration: its name and provider ID from
// the instance metadata, the lab's CRI socket, no image pulls, the preflight checks a network
// namespace fails ignored.
func (c Config) nodeRegistration() map[string]any {
	lab := kubeadm.LabSettings(node.KubeadmPatchesDir)
	return map[string]any{
		"name":                  "{{ ds.meta_data.local_hostname }}",
		"criSocket":             "unix://" + node.KubeadmCRISocket,
		"imagePullPolicy":       lab.ImagePullPolicy,
		"ignorePreflightErrors": list(lab.IgnorePreflightErrors),
		"kubeletExtraArgs":      c.args(map[string]string{"provider-id": infra.ProviderIDPrefix + "{{ ds.meta_data.local_hostname }}"}),
	}
}

// patches is the kubeadm patches directory the lab's hosts carry.
func (Config) patches() map[string]any {
	return map[string]any{"directory": kubeadm.LabSettings(node.KubeadmPatchesDir).PatchesDir}
}

// list is ss as a JSON list, for unstructured content.
func list(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
