// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package images

import (
	"fmt"
	"sort"

	"github.com/credwatch/credwatch/pkg/lab"
	labimage "github.com/credwatch/credwatch/pkg/lab/image"
)

// Registry is where kubeadm's default manifests pull from (ClusterConfiguration.imageRepository).
const Registry = "registry.k8s.io"

// Pause marks a Ref that holds the lab's pause program (from the lab images tarball) rather than a
// lab binary.
const Pause = "pause"

// Ref is one image of the tarball: its tag and the lab binary it runs.
type Ref struct {
	Tag string // "registry.k8s.io/kube-apiserver:v1.30.14"
	// Binary is the lab binary ("kube-apiserver", "etcd"), installed as /usr/local/bin/Binary, or
	// Pause for the lab's pause image.
	Binary string
	// Dir is the binary's directory under the lab bin dir ("v1.30.14", "etcd-v3.6.16").
	Dir string
	// Make is the make target that builds the binary, named when it is missing.
	Make string
	// Optional images are left out when their binary is missing (kube-proxy: the lab's control
	// planes skip kubeadm's kube-proxy addon).
	Optional bool
}

// release is what one kubeadm version names (cmd/kubeadm/app/constants/constants.go:
// DefaultEtcdVersion, PauseVersion) and which make target builds its control-plane binaries.
type release struct {
	etcd, pause string
	make        map[string]string // binary -> make target, for those not built by `make lab-binaries`
}

// releases are the Kubernetes versions kubeadm images are built for. kubeadm v1.30.14 names
// etcd 3.5.15-0 and pause 3.9; v1.36.3 names etcd 3.6.8-0 and pause 3.10.2. The lab runs its etcd
// (lab.EtcdVersion) under either tag.
func releases() map[string]release {
	capi := "make capi-binaries"
	return map[string]release{
		"v1.30.14": {etcd: "3.5.15-0", pause: "3.9", make: map[string]string{"kube-controller-manager": capi, "kube-scheduler": capi}},
		"v1.36.3":  {etcd: "3.6.8-0", pause: "3.10.2"},
	}
}

// Versions are the Kubernetes versions Refs knows, sorted.
func Versions() []string {
	var vs []string
	for v := range releases() {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	return vs
}

// Refs returns the images kubeadm of version runs, sorted by tag: the control plane's
// kube-apiserver, kube-controller-manager and kube-scheduler, kube-proxy (optional), etcd under
// kubeadm's etcd tag, and the pause image under kubeadm's tag and containerd's sandbox_image
// (labimage.PauseRef). CoreDNS is not among them: the lab skips kubeadm's CoreDNS addon.
func Refs(version string) ([]Ref, error) {
	r, ok := releases()[version]
	if !ok {
		return nil, fmt.Errorf("kubeadm images: no image list for Kubernetes %s (known: %v)", version, Versions())
	}
	target := func(bin string) string {
		if t, ok := r.make[bin]; ok {
			return t
		}
		return "make lab-binaries"
	}
	var refs []Ref
	for _, bin := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		refs = append(refs, Ref{Tag: Registry + "/" + bin + ":" + version, Binary: bin, Dir: version, Make: target(bin), Optional: bin == "kube-proxy"})
	}
	refs = append(refs, Ref{Tag: Registry + "/etcd:" + r.etcd, Binary: "etcd", Dir: "etcd-" + lab.EtcdVersion, Make: target("etcd")})
	refs = append(refs, Ref{Tag: labimage.PauseRef, Binary: Pause})
	if tag := Registry + "/pause:" + r.pause; tag != labimage.PauseRef {
		refs = append(refs, Ref{Tag: tag, Binary: Pause})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Tag < refs[j].Tag })
	return refs, nil
}
