// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package capi runs the real Cluster API controllers against a lab (issue 23): the core, kubeadm
// bootstrap and KubeadmControlPlane managers of one Cluster API release, built from
// sigs.k8s.io/cluster-api by `make capi-binaries` (hack/labbin/build-capi.sh) together with that
// release's CRDs and webhook manifests, copied from the same module. Find locates them in the
// lab's bin directory; Start applies the CRDs to a running lab (its management cluster, at
// v1.30.14, the line v1.8 supports), starts the managers as children of the lab's process
// (package proc) and registers their webhooks, served from a lab-CA certificate on the lab
// network's gateway, since they cannot be turned off. Two releases are built: v1.8.1, whose KubeadmControlPlane removes the old
// machine's etcd member before draining it, and v1.8.4, which removes it in a pre-terminate hook
// after the drain.
package capi
