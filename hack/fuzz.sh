#!/usr/bin/env bash
# fuzz.sh DURATION [PACKAGE...]: run every Fuzz* target in the module (or in the given packages)
# for DURATION each, and end with one line per target: its exec count.
set -euo pipefail
t="${1:-60s}"
shift || true
cd "$(dirname "$0")/.."
summary="$(mktemp)"
trap 'rm -f "$summary"' EXIT
for pkg in $(go list "${@:-./...}"); do
  dir="$(go list -f '{{.Dir}}' "$pkg")"
  for f in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' "$dir"/*_test.go 2>/dev/null | awk '{print $2}'); do
    echo "== $pkg $f ($t)"
    log="$(mktemp)"
    go test -run '^$' -fuzz "^${f}\$" -fuzztime "$t" "$pkg" 2>&1 | tee "$log"
    execs="$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | awk '{print $2}')"
    rm -f "$log"
    echo "$pkg $f: ${execs:-?} execs in $t, no finding" >>"$summary"
  done
done
echo "== summary"
cat "$summary"
