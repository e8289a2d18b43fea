#!/usr/bin/env bash
# test.sh: every Go test of the main module, in three concurrent streams (`make test` runs it).
#
# The lab tests spend most of their time waiting (apiservers starting, watch intervals), so on
# 2 cores the longest lab packages run beside the others, each stream one package at a time
# (-p 1): pkg/lab/scenario (~16 min: every lab scenario), and pkg/watch (~6 min),
# pkg/lab/cloudlab (~10 min) and internal/cmd/root (~4 min: the doc examples run on a lab).
# Concurrent labs are safe: each reserves its own 127.0.x.1:6443 and 10.200.x.0/24. The side
# streams' output is printed when every stream has ended.
# TEST_STREAMS=1 runs everything in one stream; TEST_STREAMS=2 the two of before (scenario in the
# main stream).
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
flags=(-count=1 -timeout 25m -p 1)
# shellcheck disable=SC2206
extra=(${GOTEST_FLAGS:-})
streams=${TEST_STREAMS:-3}
if [[ "$streams" == 1 ]]; then
  exec "$GO" test "${flags[@]}" "${extra[@]}" ./...
fi
mod=github.com/credwatch/credwatch
sides=("$mod/pkg/watch $mod/pkg/lab/cloudlab $mod/internal/cmd/root")
[[ "$streams" == 2 ]] || sides+=("$mod/pkg/lab/scenario")
# shellcheck disable=SC2206
aside=(${sides[*]})
mapfile -t rest < <("$GO" list ./... | grep -v -x -F "${aside[@]/#/-e}")
start=$SECONDS
outs=() pids=()
for s in "${sides[@]}"; do
  out=$(mktemp /tmp/credwatch-test-side.XXXXXX)
  outs+=("$out")
  # shellcheck disable=SC2086
  "$GO" test "${flags[@]}" "${extra[@]}" $s >"$out" 2>&1 &
  pids+=($!)
done
trap 'rm -f "${outs[@]}"' EXIT
"$GO" test "${flags[@]}" "${extra[@]}" "${rest[@]}"
rc=$?
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || rc=$((rc == 0 ? $? : rc))
  echo "== ${sides[$i]} (ran beside the other packages)"
  cat "${outs[$i]}"
done
echo "test.sh: all $streams streams done after $((SECONDS - start)) s"
exit "$rc"
