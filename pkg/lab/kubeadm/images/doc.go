// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package images builds the container images a kubeadm control plane runs, from the lab's own
// binaries, with no registry and no container daemon: one docker-archive tarball for
// `ctr -n k8s.io images import` on each kubeadm host of the Cluster API lab (issue 23).
//
// kubeadm's static pods name their images exactly (`kubeadm config images list`); Refs lists them
// per Kubernetes version: registry.k8s.io/kube-apiserver, kube-controller-manager, kube-scheduler
// and (when its binary is there) kube-proxy of that version, the lab's etcd (lab.EtcdVersion)
// under kubeadm's etcd tag (3.5.15-0 for v1.30.14), and the lab's pause program under kubeadm's
// pause tag (3.9) and containerd's sandbox_image (3.10). CoreDNS is left out: the lab's
// KubeadmControlPlane skips the CoreDNS and kube-proxy addons, and must set
// nodeRegistration.imagePullPolicy Never, or kubeadm join's preflight tries to pull them (see
// docs/dev/lab-kubeadm-images.md).
//
// The lab's Kubernetes and etcd binaries are dynamic (they link libc.so.6), so each image holds
// the binary at /usr/local/bin/NAME (on PATH: the manifests' `command:` calls it by name), its
// interpreter at the path PT_INTERP names and the libraries its DT_NEEDED entries name,
// transitively, copied from this machine (SharedFiles, with debug/elf). The images run as root,
// as the registry's do: the static pods read /etc/kubernetes/pki keys of mode 0600.
//
// Build caches the tarball in Config.OutDir under a hash of its inputs (the tags, and the path,
// size and mtime of every file copied in), so a second Build returns at once. Image digests are
// reproducible (ociimage: fixed mtimes, sorted entries); the tarball's bytes are not, since
// go-containerregistry writes its blobs in map order.
//
// Figures (v1.30.14, 2 shared cores): a 94.9 MB tarball (kube-apiserver 32.6 MB compressed,
// 117 MB unpacked; controller-manager 31.1/112; scheduler 19.5/62; etcd 11.0/30), 62 s cold, 1 ms
// cached; a lab node imports it in about 8 s.
package images
