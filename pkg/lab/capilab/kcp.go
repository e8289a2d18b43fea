// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/credwatch/credwatch/pkg/lab/capi/workload"
)

// PatchKubeadmConfigSpec merges patch into the KubeadmControlPlane's spec.kubeadmConfigSpec (a
// JSON merge patch: maps merge, lists are replaced). KubeadmControlPlane then rolls every machine
// whose configuration no longer matches, and writes the ClusterConfiguration's apiServer part into
// the workload cluster's kubeadm-config ConfigMap, from which kubeadm join renders a joining
// machine's flags.
func (c *Lab) PatchKubeadmConfigSpec(ctx context.Context, patch map[string]any) error {
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"kubeadmConfigSpec": patch}})
	if err != nil {
		return fmt.Errorf("capi lab: kubeadmConfigSpec patch: %w", err)
	}
	cl := c.cfg.Cluster
	if _, err := c.dyn.Resource(GVR(workload.ControlPlaneAPIVersion, "KubeadmControlPlane")).Namespace(namespace(cl)).
		Patch(ctx, cl.ControlPlaneName(), types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("capi lab: patch the KubeadmControlPlane's kubeadmConfigSpec: %w", err)
	}
	fmt.Fprintf(c.cfg.Log, "capi lab: patched %s's kubeadmConfigSpec: %s\n", cl.ControlPlaneName(), data)
	return nil
}
