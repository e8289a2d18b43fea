// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/provider"
	"github.com/credwatch/credwatch/pkg/lab/platform"
)

// The ClusterRole lets the controller do what it does to each resource it touches, and leader
// election take its Lease.
func TestProviderRules(t *testing.T) {
	t.Parallel()
	allowed := func(gvr schema.GroupVersionResource, verb string) bool {
		for _, r := range providerRules() {
			if slices.Contains(r.APIGroups, gvr.Group) && slices.Contains(r.Resources, gvr.Resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	status := func(gvr schema.GroupVersionResource) schema.GroupVersionResource {
		gvr.Resource += "/status"
		return gvr
	}
	lease := schema.GroupVersionResource{Group: "coordination.k8s.io", Resource: "leases"}
	for _, tc := range []struct {
		gvr   schema.GroupVersionResource
		verbs []string
	}{
		{infra.LabClusters, []string{"get", "list", "watch", "update"}},
		{infra.LabMachines, []string{"get", "list", "watch", "update"}},
		{status(infra.LabClusters), []string{"update"}},
		{status(infra.LabMachines), []string{"update"}},
		{controller.Clusters, []string{"get", "list", "watch"}},
		{controller.Machines, []string{"get", "list", "watch"}},
		{controller.Secrets, []string{"get"}},
		{lease, []string{"get", "create", "update"}},
	} {
		for _, v := range tc.verbs {
			if !allowed(tc.gvr, v) {
				t.Errorf("the provider may not %s %s", v, tc.gvr.GroupResource())
			}
		}
	}
	if allowed(controller.Secrets, "list") {
		t.Error("the provider may list Secrets: it only reads the bootstrap data Secrets by name")
	}
}

// The Deployment runs the provider's image on the worker's network, with the API at the
// endpoint, its Pod's name and namespace for the Lease, and the cloud's token and CA where the
// program reads them.
func TestProviderDeployment(t *testing.T) {
	t.Parallel()
	d := providerDeployment(providerArgs{node: "w1-md-0-abc", apiHost: "10.10.0.1", apiPort: "40001",
		cloudURL: "https://10.10.0.1:41000", namespace: "default"})
	spec := d.Spec.Template.Spec
	if d.Namespace != capi.LabInfraNamespace() || !spec.HostNetwork || spec.NodeSelector[corev1.LabelHostname] != "w1-md-0-abc" {
		t.Errorf("Deployment in %s, hostNetwork %v, node selector %v", d.Namespace, spec.HostNetwork, spec.NodeSelector)
	}
	if got := d.Spec.Template.Labels[capi.ManagerPodLabel]; got != capi.LabInfraName() {
		t.Errorf("Pod label %s=%q, want %q (ManagerReport selects it)", capi.ManagerPodLabel, got, capi.LabInfraName())
	}
	c := spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	want := map[string]string{"KUBERNETES_SERVICE_HOST": "10.10.0.1", "KUBERNETES_SERVICE_PORT": "40001",
		"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace", "GOMAXPROCS": "2"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("env %s=%q, want %q", k, env[k], v)
		}
	}
	if want := []string{"--namespace=default", "--cloud-url=https://10.10.0.1:41000"}; !slices.Equal(c.Args, want) {
		t.Errorf("args %v, want %v", c.Args, want)
	}
	if c.Name != "manager" || c.ImagePullPolicy != corev1.PullNever || len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != providerMount {
		t.Errorf("container %s, pull %s, mounts %+v", c.Name, c.ImagePullPolicy, c.VolumeMounts)
	}
	if v := spec.Volumes[0]; v.Secret == nil || v.Secret.SecretName != providerSecret {
		t.Errorf("volume %+v, want Secret %s", v, providerSecret)
	}
}

// The Pods' step lines become the timeline's events; their other lines do not.
func TestPodSteps(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC)
	step := controller.Event{Time: at, Namespace: "default", Cluster: "w1", Machine: "w1-control-plane-abcde", Step: infra.Deregister}
	line, err := json.Marshal(provider.StepLine{Event: platform.Event{Time: at, Pod: "capl-1", Event: provider.EventStep}, Step: step})
	if err != nil {
		t.Fatal(err)
	}
	f := writeCRI(t, t.TempDir(), capi.LabInfraNamespace()+"_"+providerName+"-abc_uid1", "manager",
		`2026-12-07T11:00:00Z stdout F {"t":"2026-12-07T11:00:00Z","pod":"capl-1","event":"leading"}`,
		"2026-12-07T11:00:01Z stdout F "+string(line),
		`2026-12-07T11:00:02Z stderr F E1207 11:00:02.000000 1 leaderelection.go:441] Failed to update lock`)
	got := podSteps([]string{f})
	if len(got) != 1 || got[0] != step {
		t.Errorf("podSteps = %+v, want [%+v]", got, step)
	}
}
