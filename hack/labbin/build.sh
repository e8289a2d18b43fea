#!/usr/bin/env bash
# build.sh OUTDIR: build the lab's binaries into OUTDIR/<version>/<name>, skipping any already there.
#   OUTDIR/v1.36.3/{kube-apiserver,kube-controller-manager,kube-scheduler,kubelet,kube-proxy,kubectl}, OUTDIR/v1.30.14/kube-apiserver,
#   OUTDIR/v1.29.15/{kube-apiserver,kube-controller-manager,kube-scheduler,kubelet,kube-proxy} (the in-tree vSphere era),
#   OUTDIR/v1.36.3/vsphere-cloud-controller-manager (the external era), OUTDIR/etcd-v3.6.16/etcd
# Each comes from its own module under hack/labbin, so the tool's go.mod stays light.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "$1" && cd "$1" && pwd)"
# A machine-wide copy lets a fresh clone (CI) skip the build: only the first build on a machine pays.
shared="${CREDWATCH_LAB_SHARED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/credwatch/lab-bin}"
# A binary built from the project's own source (the lab's cloud controller manager) carries a
# stamp, NAME.src, with the hash of that source: a cached copy with another stamp is rebuilt.
build() { # module-dir version package name [source-hash]
  local dst="$out/$2/$4" src="${5:-}"
  fresh() { [[ -x "$1" ]] && { [[ -z $src ]] || [[ "$(cat "$1.src" 2>/dev/null)" == "$src" ]]; }; }
  if fresh "$dst"; then echo "lab-binaries: $2/$4 cached"; return; fi
  if fresh "$shared/$2/$4"; then
    mkdir -p "$out/$2" && cp "$shared/$2/$4" "$dst.tmp" && mv "$dst.tmp" "$dst"
    [[ -z $src ]] || echo "$src" >"$dst.src"
    echo "lab-binaries: $2/$4 copied from $shared"; return
  fi
  echo "lab-binaries: building $2/$4 (a few minutes the first time)" >&2
  mkdir -p "$out/$2"
  local ld="-s -w"
  if [[ "$2" == v1.* ]]; then
    local mm="${2#v}"; mm="${mm%.*}"
    ld="$ld -X k8s.io/component-base/version.gitVersion=$2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${mm#1.}"
    ld="$ld -X k8s.io/client-go/pkg/version.gitVersion=$2"
  fi
  (cd "$here/$1" && go build -trimpath -ldflags "$ld" -o "$dst.tmp" "$3") && mv "$dst.tmp" "$dst"
  [[ -z $src ]] || echo "$src" >"$dst.src"
  mkdir -p "$shared/$2" && cp "$dst" "$shared/$2/$4.tmp" && mv "$shared/$2/$4.tmp" "$shared/$2/$4" &&
    { [[ -z $src ]] || echo "$src" >"$shared/$2/$4.src"; } || true
}
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
