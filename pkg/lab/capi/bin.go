// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/credwatch/credwatch/pkg/lab"
)

// The Cluster API releases `make capi-binaries` builds.
const (
	// V181 removes the old machine's etcd member before the drain
	// (controlplane/kubeadm/internal/controllers/scale.go:138).
	V181 = "v1.8.1"
	// V184 removes it in the kcp-cleanup pre-terminate hook, after the drain.
	V184 = "v1.8.4"
	// V1142 serves v1beta2 (v1beta1 still, through conversion), removes the etcd member in the
	// pre-terminate hook after moving leadership away (#13848), and no longer regenerates a
	// deleted <cluster>-sa Secret once the control plane is initialized (#13175).
	V1142 = "v1.14.2"
	// MakeTarget builds the managers, CRDs and webhook manifests of every version.
	MakeTarget = "make capi-binaries"
)

// Versions lists the Cluster API releases the lab builds, oldest first.
func Versions() []string { return []string{V181, V184, V1142} }

// Line is the Kubernetes a release's lab runs: the management cluster and the workload control
// plane (kubeadm and its images) on one line the release supports, the workload hosts' kubelet,
// and the API version the lab writes its Cluster API objects in.
type Line struct {
	Kubernetes string // "v1.30.14"
	Kubelet    string // "v1.29.15": within the kubelet skew kubeadm allows
	API        string // "v1beta1" or "v1beta2"
}

// LineOf is version's Line (v1.8: Kubernetes v1.30.14, the newest it supports, with the v1.29.15
// kubelet the cloud lab builds; v1.14: v1.36.3 throughout, in v1beta2).
func LineOf(version string) Line {
	if version == V1142 {
		return Line{Kubernetes: lab.DefaultVersion, Kubelet: lab.DefaultVersion, API: "v1beta2"}
	}
	return Line{Kubernetes: lab.OldVersion, Kubelet: lab.InTreeCloudVersion, API: "v1beta1"}
}

// The managers' binary names, in the order they are started.
const (
	CoreManager         = "cluster-api-controller"           // sigs.k8s.io/cluster-api
	BootstrapManager    = "kubeadm-bootstrap-controller"     // sigs.k8s.io/cluster-api/bootstrap/kubeadm
	ControlPlaneManager = "kubeadm-control-plane-controller" // sigs.k8s.io/cluster-api/controlplane/kubeadm
)

// ManagerNames lists the three managers in the order they are started.
func ManagerNames() []string { return []string{CoreManager, BootstrapManager, ControlPlaneManager} }

// Manager is one manager of a release: its binary and the webhook manifests it serves (a
// ValidatingWebhookConfiguration and a MutatingWebhookConfiguration, pointing at a Service).
type Manager struct {
	Name     string
	Binary   string
	Webhooks string
}

// Release is what the lab runs of one Cluster API release.
type Release struct {
	Version  string
	Dir      string    // <bin dir>/capi-<version>
	Managers []Manager // in ManagerNames' order
	CRDs     []string  // every CRD file, sorted
	// InventoryCRD is clusterctl's Provider CRD: the inventory `clusterctl init` keeps of the
	// providers and their versions, which the lab writes as clusterctl would (see Inventory).
	InventoryCRD string
}

// ManifestsDone is the file hack/labbin/lib.sh writes once a release's manifests are copied whole.
const ManifestsDone = "manifests-2.done"

// Dir is a release's directory under the lab's bin directory.
func Dir(binDir, version string) string { return filepath.Join(binDir, "capi-"+version) }

// Find returns the managers, CRDs and webhook manifests of version under binDir (the lab's bin
// directory, lab.DefaultBinDir), or an error naming everything missing and MakeTarget.
func Find(binDir, version string) (Release, error) {
	if !slices.Contains(Versions(), version) {
		return Release{}, fmt.Errorf("cluster api %q: the lab builds %v", version, Versions())
	}
	r := Release{Version: version, Dir: Dir(binDir, version)}
	var errs []error
	missing := func(what, p string) {
		errs = append(errs, fmt.Errorf("cluster api %s %s not found at %s", version, what, p))
	}
	for _, name := range ManagerNames() {
		m := Manager{Name: name, Binary: filepath.Join(r.Dir, name), Webhooks: filepath.Join(r.Dir, "webhooks", name+".yaml")}
		if st, err := os.Stat(m.Binary); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing(name, m.Binary)
		}
		if st, err := os.Stat(m.Webhooks); err != nil || !st.Mode().IsRegular() {
			missing(name+" webhook manifests", m.Webhooks)
		}
		r.Managers = append(r.Managers, m)
	}
	// manifests-2.done marks a complete copy (hack/labbin/lib.sh): a half-copied directory, or
	// one copied before clusterctl's CRD was part of it, is missing.
	crds, _ := filepath.Glob(filepath.Join(r.Dir, "crds", "*.yaml"))
	if _, err := os.Stat(filepath.Join(r.Dir, ManifestsDone)); err != nil || len(crds) == 0 {
		missing("CRDs", filepath.Join(r.Dir, "crds"))
	}
	r.InventoryCRD = filepath.Join(r.Dir, "clusterctl", "clusterctl.cluster.x-k8s.io_providers.yaml")
	if st, err := os.Stat(r.InventoryCRD); err != nil || !st.Mode().IsRegular() {
		missing("clusterctl Provider CRD", r.InventoryCRD)
	}
	slices.Sort(crds)
	r.CRDs = crds
	if len(errs) > 0 {
		return Release{}, fmt.Errorf("%w: run `%s` (or set CREDWATCH_LAB_BIN)", errors.Join(errs...), MakeTarget)
	}
	return r, nil
}
