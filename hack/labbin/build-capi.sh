#!/usr/bin/env bash
# build-capi.sh OUTDIR: build what the Cluster API lab (issue 23) runs into OUTDIR, skipping any
# already there (the shared cache of build.sh, lib.sh):
#   OUTDIR/v1.30.14/{kubeadm,kube-controller-manager,kube-scheduler} (the management and workload line),
#   OUTDIR/crictl-v1.34.0/crictl (kubeadm 1.30 refuses to run without it),
#   OUTDIR/capi-VERSION/{cluster-api-controller,kubeadm-bootstrap-controller,kubeadm-control-plane-controller}
#   and their CRDs and webhook manifests, OUTDIR/capi-{v1.8.1,v1.14.2}/bin/clusterctl, OUTDIR/capi-VERSION/{crds,webhooks}, for v1.8.1 (etcd
#   member removed before the drain), v1.8.4 (in the pre-terminate hook after it) and v1.14.2
#   (v1beta2, with OUTDIR/v1.36.3/kubeadm: the management and workload line it supports).
# Cold: ~15-20 minutes on 2 cores; `make capi-binaries` runs it (not part of `make test`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
. "$here/lib.sh"
build k8s-v1.30.14 v1.30.14 k8s.io/kubernetes/cmd/kubeadm kubeadm
build k8s-v1.30.14 v1.30.14 k8s.io/kubernetes/cmd/kube-controller-manager kube-controller-manager
build k8s-v1.30.14 v1.30.14 k8s.io/kubernetes/cmd/kube-scheduler kube-scheduler
CGO_ENABLED=0 build cri-tools crictl-v1.34.0 sigs.k8s.io/cri-tools/cmd/crictl crictl
# v1.14.2 (v1beta2; the etcd member removed in the pre-terminate hook after the drain, leadership
# moved first; <cluster>-sa no longer regenerated) runs on the v1.36.3 line: its kubeadm is built
# here, the rest of that line by build.sh.
build k8s-v1.36.3 v1.36.3 k8s.io/kubernetes/cmd/kubeadm kubeadm
for v in v1.8.1 v1.8.4 v1.14.2; do
  # The core manager moved from the module root to sigs.k8s.io/cluster-api/core in v1.11 (and
  # its CRDs to core/config, which lib.sh's manifests knows).
  core=sigs.k8s.io/cluster-api/core
  case $v in v1.8.*) core=sigs.k8s.io/cluster-api ;; esac
  build "capi-$v" "capi-$v" $core cluster-api-controller
  build "capi-$v" "capi-$v" sigs.k8s.io/cluster-api/bootstrap/kubeadm kubeadm-bootstrap-controller
  build "capi-$v" "capi-$v" sigs.k8s.io/cluster-api/controlplane/kubeadm kubeadm-control-plane-controller
  manifests "capi-$v" "capi-$v" "sigs.k8s.io/cluster-api@$v"
done
# clusterctl of v1.8.1 and v1.14.2, for the self-managed cluster (capilab.Move runs `clusterctl move`).
for v in v1.8.1 v1.14.2; do
  build "capi-$v" "capi-$v/bin" sigs.k8s.io/cluster-api/cmd/clusterctl clusterctl
done
