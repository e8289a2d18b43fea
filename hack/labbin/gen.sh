#!/usr/bin/env bash
# gen.sh VERSION: (re)generate the build module for one Kubernetes line under hack/labbin/k8s-VERSION.
# It requires k8s.io/kubernetes at VERSION and replaces every staging module kubernetes' own go.mod
# replaces with the published v0.Y.Z of that module (the recipe in shared/reference §11).
set -euo pipefail
v="$1"                                   # e.g. v1.36.3
minor="v0.${v#v1.}"                      # v0.36.3
dir="$(cd "$(dirname "$0")" && pwd)/k8s-${v}"
mkdir -p "$dir"
modfile="$(go mod download -json "k8s.io/kubernetes@${v}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
{
  echo "module credwatch.local/labbin/k8s"
  echo
  echo "go $(sed -n 's/^go //p' "$modfile")"
  echo
  echo "require k8s.io/kubernetes ${v}"
  echo
  echo "replace ("
  sed -n '/^replace (/,/^)/p' "$modfile" | awk '/=> \.\/staging/ {print "\t" $1 " => " $1 " '"${minor}"'"}'
  echo ")"
} > "$dir/go.mod"
cat > "$dir/tools.go" <<'GO'
//go:build tools

// Package tools pins the Kubernetes commands the lab builds.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO
(cd "$dir" && go mod tidy)
