#!/usr/bin/env bash
# tools.sh: the deploy modules' pinned tools (promtool, Prometheus, krew and krew's manifest
# validator), each built once per machine into the machine-wide cache of the lab binaries
# (hack/labbin/lib.sh) as tools/NAME-KEY, so a fresh clone (CI) skips the build. KEY hashes the
# module's go.mod and go.sum, the package, the build flags and the Go toolchain and environment
# (GOVERSION, CGO_ENABLED, GOFLAGS...): a version bump builds anew.
#   tools.sh [NAME...]  build them (default: what make test-deploy runs); make tools runs this
#   tools.sh -p NAME    print NAME's path, building it first if missing; the tests run this
#   tools.sh -k NAME    print NAME's key
# Built -trimpath without symbol table or DWARF (-s -w): smaller, and a faster link. A tool unused
# for 30 days (a cache hit touches it) is removed when its NAME is next built.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
GO=${GO:-go}
dir="${CREDWATCH_LAB_SHARED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/credwatch/lab-bin}/tools"
ldflags="-s -w"
default=(promtool validate-krew-manifest krew)
quiet=

# spec NAME: the tool's module directory, package and build flags.
spec() {
  case $1 in
  promtool) echo "hack/promtool github.com/prometheus/prometheus/cmd/promtool -tags=remove_all_sd" ;;
  prometheus) echo "hack/promtool github.com/prometheus/prometheus/cmd/prometheus -tags=remove_all_sd" ;;
  krew) echo "hack/krew sigs.k8s.io/krew/cmd/krew" ;;
  validate-krew-manifest) echo "hack/krew sigs.k8s.io/krew/cmd/validate-krew-manifest" ;;
  *) echo "tools: no tool $1 (promtool, prometheus, krew, validate-krew-manifest)" >&2; return 2 ;;
  esac
}

# key MODULE PACKAGE [FLAGS]: 16 hex digits of the sha256 of what the build depends on: the
# module's requirements, the package, the flags, and the toolchain and environment go build reads
# (a Go upgrade, CGO_ENABLED or GOFLAGS from the caller's environment build anew).
key() {
  local platform
  platform=$(cd "$root/$1" && "$GO" env GOOS GOARCH GOVERSION CGO_ENABLED GOFLAGS GOEXPERIMENT | tr '\n' /)
  { cat "$root/$1/go.mod" "$root/$1/go.sum"; echo "$2 ${3:-} -trimpath -ldflags=$ldflags $platform"; } |
    sha256sum | cut -c1-16
}

# ensure NAME: sets bin to the tool's path, building it first if it is not in the cache.
ensure() {
  local s mod pkg flags t0
  s=$(spec "$1") || return
  read -r mod pkg flags <<<"$s"
  bin="$dir/$1-$(key "$mod" "$pkg" "$flags")"
  if [[ -x $bin ]]; then touch "$bin" 2>/dev/null || true; [[ -n $quiet ]] || echo "tools: $1 cached" >&2; return; fi
  mkdir -p "$dir"
  # One build per tool at a time: a second caller waits for the first one's binary.
  exec 9>"$dir/.$1.lock"
  flock 9
  if [[ -x $bin ]]; then flock -u 9; [[ -n $quiet ]] || echo "tools: $1 cached" >&2; return; fi
  echo "tools: building $1 (minutes the first time)" >&2
  t0=$SECONDS
  # shellcheck disable=SC2086 # flags: none or one word
  (cd "$root/$mod" && "$GO" build -trimpath -ldflags "$ldflags" $flags -o "$bin.tmp" "$pkg") ||
    { rm -f "$bin.tmp"; flock -u 9; echo "tools: building $1 failed" >&2; return 1; }
  mv "$bin.tmp" "$bin"
  find "$dir" -maxdepth 1 -name "$1-*" ! -name "$1-*.tmp" ! -path "$bin" -mtime +30 -delete 2>/dev/null || true
  flock -u 9
  echo "tools: built $1 in $((SECONDS - t0)) s, $(($(stat -c %s "$bin") / 1000000)) MB" >&2
}

case "${1:-}" in
-p) [[ $# == 2 ]] || { echo "usage: tools.sh -p NAME" >&2; exit 2; }
  quiet=1 ensure "$2"
  echo "$bin" ;;
-k) [[ $# == 2 ]] || { echo "usage: tools.sh -k NAME" >&2; exit 2; }
  s=$(spec "$2")
  read -r mod pkg flags <<<"$s"
  key "$mod" "$pkg" "$flags" ;;
*) for t in "${@:-${default[@]}}"; do ensure "$t"; done ;;
esac
