#!/usr/bin/env bash
# build.sh OUTDIR: build the lab's binaries into OUTDIR/<version>/<name>, skipping any already there.
#   OUTDIR/v1.36.3/{kube-apiserver,kube-controller-manager,kube-scheduler,kubelet,kube-proxy,kubectl}, OUTDIR/v1.30.14/kube-apiserver,
#   OUTDIR/v1.29.15/{kube-apiserver,kube-controller-manager,kube-scheduler,kubelet,kube-proxy} (the in-tree vSphere era),
#   OUTDIR/v1.36.3/vsphere-cloud-controller-manager (the external era), OUTDIR/etcd-v3.6.16/etcd,
#   OUTDIR/v1.36.3/external-jwt-signer (the members' external token signer),
#   OUTDIR/v1.36.3/lab-credential-provider (the nodes' kubelet image credential provider)
# Each comes from its own module under hack/labbin, so the tool's go.mod stays light.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
. "$here/lib.sh"
build etcd etcd-v3.6.16 go.etcd.io/etcd/server/v3 etcd
build k8s-v1.36.3 v1.36.3 k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver
build k8s-v1.30.14 v1.30.14 k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver
build k8s-v1.36.3 v1.36.3 k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager
# Nodes (lab up --nodes): kubelet, kube-proxy and kube-scheduler from the same line.
build k8s-v1.36.3 v1.36.3 k8s.io/kubernetes/cmd/kube-scheduler kube-scheduler
build k8s-v1.36.3 v1.36.3 k8s.io/kubernetes/cmd/kubelet kubelet
build k8s-v1.36.3 v1.36.3 k8s.io/kubernetes/cmd/kube-proxy kube-proxy
# kubectl: hack/krew installs the plugin with krew and runs `kubectl credwatch` through it.
build k8s-v1.36.3 v1.36.3 k8s.io/kubernetes/cmd/kubectl kubectl
# The in-tree cloud-provider era (lab cloud-password-rotated): v1.29 is the last line that compiles
# k8s.io/legacy-cloud-providers/vsphere.
build k8s-v1.29.15 v1.29.15 k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager
build k8s-v1.29.15 v1.29.15 k8s.io/kubernetes/cmd/kubelet kubelet
# ... and the rest of that line, so the in-tree era can also run one version throughout (apiserver
# started with --cloud-provider=vsphere as kubespray started it, and its scheduler and kube-proxy).
build k8s-v1.29.15 v1.29.15 k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver
build k8s-v1.29.15 v1.29.15 k8s.io/kubernetes/cmd/kube-scheduler kube-scheduler
build k8s-v1.29.15 v1.29.15 k8s.io/kubernetes/cmd/kube-proxy kube-proxy
# The external era of the same story: a cloud controller manager on k8s.io/cloud-provider with a
# small govmomi-backed vSphere provider and a gophercloud-backed OpenStack one (hack/labbin/ccm; the
# vSphere CPI is not on the module proxy).
# Static (CGO_ENABLED=0): the lab runs it as a Pod from an image holding only the binary.
ccm_src=$(cd "$here/ccm" && cat go.mod go.sum *.go | sha256sum | cut -c1-16)
CGO_ENABLED=0 build ccm v1.36.3 . vsphere-cloud-controller-manager "$ccm_src"
# The members' external JWT signer (KEP-740, GA in 1.36): the published k8s.io/externaljwt v1 gRPC
# API on a Unix socket (hack/labbin/signer), in a module of its own so gRPC stays out of go.mod.
signer_src=$(cd "$here/signer" && cat go.mod go.sum *.go | sha256sum | cut -c1-16)
CGO_ENABLED=0 build signer v1.36.3 . external-jwt-signer "$signer_src"
# The nodes' kubelet image credential provider (KEP-4412): reads the kubelet's
# CredentialProviderRequest (k8s.io/kubelet types) and logs the token's claims, never the token.
credprovider_src=$(cd "$here/credprovider" && cat go.mod go.sum *.go | sha256sum | cut -c1-16)
CGO_ENABLED=0 build credprovider v1.36.3 . lab-credential-provider "$credprovider_src"
