// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package capi runs the real Cluster API controllers against a lab (issue 23): the core, kubeadm
// bootstrap and KubeadmControlPlane managers of one Cluster API release, built from
// sigs.k8s.io/cluster-api by `make capi-binaries` (hack/labbin/build-capi.sh) together with that
// release's CRDs and webhook manifests, copied from the same module. Find locates them in the
// lab's bin directory. Two releases are built: v1.8.1, whose KubeadmControlPlane removes the old
// machine's etcd member before draining it, and v1.8.4, which removes it in a pre-terminate hook
// after the drain.
package capi
