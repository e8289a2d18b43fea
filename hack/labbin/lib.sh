# lib.sh: sourced by the build scripts here (with here = hack/labbin and out = OUTDIR set): build
# builds one lab binary into $out/VERSION/NAME, looking in the shared cache first.
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
  crictl-v*) ld="$ld -X sigs.k8s.io/cri-tools/pkg/version.Version=${2#crictl-}" ;;
  esac
  # (A failed `(...) && mv` list would not stop a `set -e` script: the build went on silently.)
  (cd "$here/$1" && go build -trimpath -ldflags "$ld" -o "$dst.tmp" "$3") ||
    { echo "lab-binaries: building $2/$4 failed" >&2; return 1; }
  mv "$dst.tmp" "$dst"
  echo "lab-binaries: built $2/$4 in $((SECONDS - t0)) s, $(($(stat -c %s "$dst") / 1000000)) MB" >&2
  [[ -z $src ]] || echo "$src" >"$dst.src"
  mkdir -p "$shared/$2" && cp "$dst" "$shared/$2/$4.tmp" && mv "$shared/$2/$4.tmp" "$shared/$2/$4" &&
    { [[ -z $src ]] || echo "$src" >"$shared/$2/$4.src"; } || true
}
