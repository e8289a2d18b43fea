#!/usr/bin/env bash
# fuzz.sh DURATION: run every Fuzz* target in the module for DURATION each.
set -euo pipefail
t="${1:-60s}"
cd "$(dirname "$0")/.."
for pkg in $(go list ./...); do
  dir="$(go list -f '{{.Dir}}' "$pkg")"
  for f in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' "$dir"/*_test.go 2>/dev/null | awk '{print $2}'); do
    echo "== $pkg $f ($t)"
    go test -run '^$' -fuzz "^${f}\$" -fuzztime "$t" "$pkg"
  done
done
