#!/usr/bin/env bash
# image.sh [OUT]: build the credwatch OCI image for linux/amd64 and linux/arm64 as an OCI image
# layout tarball (default bin/credwatch-image.tar) with no container daemon. `make image` runs it.
# Reproducible: the binaries are built with -trimpath and no VCS stamp beyond VERSION/COMMIT, and
# every timestamp in the image is the commit time (or SOURCE_DATE_EPOCH), so building twice from
# the same clean commit with the same Go toolchain gives the same bytes and digest.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
OUT=${1:-bin/credwatch-image.tar}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64}
CLI=github.com/credwatch/credwatch/internal/cli
LDFLAGS="-s -w -X $CLI.version=$VERSION -X $CLI.commit=$COMMIT"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=()
for p in $PLATFORMS; do
  bin="$tmp/credwatch-${p//\//-}"
  echo "building credwatch for $p" >&2
  CGO_ENABLED=0 GOOS=${p%/*} GOARCH=${p#*/} "$GO" build -trimpath -buildvcs=false -ldflags "$LDFLAGS" -o "$bin" ./cmd/credwatch
  args+=(-binary "$p=$bin")
done
"$GO" run ./hack/ociimage -out "$OUT" -created "$SOURCE_DATE_EPOCH" -version "$VERSION" -revision "$COMMIT" "${args[@]}"
