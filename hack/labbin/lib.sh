# lib.sh: sourced by build.sh and build-capi.sh (with here = hack/labbin and out = OUTDIR set).
# build builds one lab binary into $out/VERSION/NAME; manifests copies a Cluster API module's
# CRDs and webhook manifests into $out/VERSION/{crds,webhooks}. Both look in the shared cache first.
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
  local t0=$SECONDS
  local ld="-s -w"
  case "$2" in
  v1.*) # Kubernetes: `--version` and `kubeadm version` print the line the directory names.
    local mm="${2#v}"; mm="${mm%.*}"
    ld="$ld -X k8s.io/component-base/version.gitVersion=$2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${mm#1.}"
    ld="$ld -X k8s.io/client-go/pkg/version.gitVersion=$2" ;;
  capi-v*) # Cluster API (hack/version.sh's variables): the managers log it at start.
    local v="${2#capi-}" mm; v="${v%%/*}"; mm="${v#v}"; mm="${mm%.*}"
    ld="$ld -X sigs.k8s.io/cluster-api/version.gitVersion=$v -X sigs.k8s.io/cluster-api/version.gitMajor=${mm%%.*} -X sigs.k8s.io/cluster-api/version.gitMinor=${mm#*.}" ;;
  crictl-v*) ld="$ld -X sigs.k8s.io/cri-tools/pkg/version.Version=${2#crictl-}" ;;
  esac
  # (A failed `(...) && mv` list would not stop a `set -e` script: the build went on silently.)
  (cd "$here/$1" && go build -trimpath -ldflags "$ld" -o "$dst.tmp" "$3") ||
    { echo "lab-binaries: building $2/$4 failed" >&2; return 1; }
  mv "$dst.tmp" "$dst"
  echo "lab-binaries: built $2/$4 in $((SECONDS - t0)) s, $(($(stat -c %s "$dst") / 1000000)) MB" >&2
  # The record `make bench` prints: when, what, how long, how big (the cold build per binary is
  # the first on a machine; a rebuild after a version change is one too).
  mkdir -p "$shared" && printf '%s\t%s/%s\t%d s\t%d MB\n' "$(date -u +%FT%TZ)" "$2" "$4" "$((SECONDS - t0))" \
    "$(($(stat -c %s "$dst") / 1000000))" >>"$shared/build-times.tsv" || true
  [[ -z $src ]] || echo "$src" >"$dst.src"
  mkdir -p "$shared/$2" && cp "$dst" "$shared/$2/$4.tmp" && mv "$shared/$2/$4.tmp" "$shared/$2/$4" &&
    { [[ -z $src ]] || echo "$src" >"$shared/$2/$4.src"; } || true
}
# manifests copies, from the Go module cache (never into the repository), a Cluster API module's
# CRDs (core, kubeadm bootstrap, KubeadmControlPlane) into $out/VERSION/crds and each manager's
# webhook manifests into $out/VERSION/webhooks/MANAGER.yaml, and clusterctl's Provider CRD (the
# inventory `clusterctl init` keeps) into $out/VERSION/clusterctl; a file manifests-2.done marks a
# copy complete (manifests.done was a copy without clusterctl's CRD).
manifests() { # module-dir version module@version
  local dst="$out/$2"
  if [[ -f $dst/manifests-2.done ]]; then echo "lab-binaries: $2 manifests cached"; return; fi
  local from="$shared/$2"
  if [[ ! -f $from/manifests-2.done ]]; then
    from="$(cd "$here/$1" && go mod download -json "$3" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
    [[ -d $from ]] || { echo "lab-binaries: go mod download $3 gave no directory" >&2; return 1; }
    local tmp="$out/$2/manifests.tmp"
    rm -rf "$tmp" && mkdir -p "$tmp/crds" "$tmp/webhooks" "$tmp/clusterctl"
    # The core provider's config moved from the module root to core/ in v1.11.
    local core="$from"; [[ -d $from/core/config ]] && core="$from/core"
    cp "$core"/config/crd/bases/*.yaml "$from"/{bootstrap,controlplane}/kubeadm/config/crd/bases/*.yaml "$tmp/crds/"
    cp "$core/config/webhook/manifests.yaml" "$tmp/webhooks/cluster-api-controller.yaml"
    cp "$from/bootstrap/kubeadm/config/webhook/manifests.yaml" "$tmp/webhooks/kubeadm-bootstrap-controller.yaml"
    cp "$from/controlplane/kubeadm/config/webhook/manifests.yaml" "$tmp/webhooks/kubeadm-control-plane-controller.yaml"
    cp "$from/cmd/clusterctl/config/crd/bases/clusterctl.cluster.x-k8s.io_providers.yaml" "$tmp/clusterctl/"
    chmod -R u+w "$tmp" && touch "$tmp/manifests-2.done"
    from="$tmp"
    mkdir -p "$shared/$2" && rm -rf "$shared/$2/crds" "$shared/$2/webhooks" "$shared/$2/clusterctl" &&
      cp -r "$tmp/crds" "$tmp/webhooks" "$tmp/clusterctl" "$shared/$2/" && touch "$shared/$2/manifests-2.done" || true
    echo "lab-binaries: copied $2 manifests from $3"
  else
    echo "lab-binaries: $2 manifests copied from $shared"
  fi
  mkdir -p "$dst" && rm -rf "$dst/crds" "$dst/webhooks" "$dst/clusterctl"
  cp -r "$from/crds" "$from/webhooks" "$from/clusterctl" "$dst/" && rm -rf "$out/$2/manifests.tmp" && touch "$dst/manifests-2.done"
}
