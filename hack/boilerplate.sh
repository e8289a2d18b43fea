#!/usr/bin/env bash
# boilerplate.sh [-fix]: every Go file of the repository starts with the licence header the
# Kubernetes ecosystem's newer projects use (SPDX identifier and copyright holder, as in
# LICENSE: Apache-2.0). `make lint` runs it; -fix adds the header where it is missing. hack/labbin
# is left alone: it builds other projects' code, and its sources are hashed into the lab-binary
# cache's stamps (hack/labbin/build.sh), so a header there would rebuild the binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
header='// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.'
fix=${1:-}
missing=()
while IFS= read -r f; do
  if [ "$(head -c ${#header} "$f")" != "$header" ]; then
    missing+=("$f")
  fi
done < <(git ls-files --cached --others --exclude-standard '*.go' | grep -v '^hack/labbin/')
if ((${#missing[@]} == 0)); then
  exit 0
fi
if [ "$fix" = -fix ]; then
  for f in "${missing[@]}"; do
    { printf '%s\n\n' "$header"; cat "$f"; } > "$f.tmp" && mv "$f.tmp" "$f"
  done
  echo "boilerplate: added the licence header to ${#missing[@]} files" >&2
  exit 0
fi
echo "boilerplate: ${#missing[@]} Go files lack the licence header (hack/boilerplate.sh -fix adds it):" >&2
printf '  %s\n' "${missing[@]:0:20}" >&2
exit 1
