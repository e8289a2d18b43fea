#!/usr/bin/env bash
# test.sh: every Go test of the main module, in two concurrent streams (`make test` runs it).
#
# The lab tests spend most of their time waiting (apiservers starting, watch intervals), so on
# 2 cores the longest lab packages, pkg/watch (~6 min), pkg/lab/cloudlab (~4 min) and
# internal/cmd/root (~5 min: the doc examples run on a lab), run beside all the others (each
# stream runs its packages one at a time, -p 1). Concurrent labs are safe: each reserves its own
# 127.0.x.1:6443 and 10.200.x.0/24. The side stream's output is printed when both streams have
# ended.
# TEST_STREAMS=1 runs everything in one stream, as before.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
flags=(-count=1 -timeout 25m -p 1)
# shellcheck disable=SC2206
extra=(${GOTEST_FLAGS:-})
if [[ "${TEST_STREAMS:-2}" == 1 ]]; then
  exec "$GO" test "${flags[@]}" "${extra[@]}" ./...
fi
mod=github.com/credwatch/credwatch
side=("$mod/pkg/watch" "$mod/pkg/lab/cloudlab" "$mod/internal/cmd/root")
mapfile -t rest < <("$GO" list ./... | grep -v -x -F "${side[@]/#/-e}")
out=$(mktemp /tmp/credwatch-test-side.XXXXXX)
trap 'rm -f "$out"' EXIT
start=$SECONDS
"$GO" test "${flags[@]}" "${extra[@]}" "${side[@]}" >"$out" 2>&1 &
pid=$!
"$GO" test "${flags[@]}" "${extra[@]}" "${rest[@]}"
rc=$?
wait "$pid"
rc2=$?
echo "== ${side[*]} (ran beside the other packages)"
cat "$out"
echo "test.sh: both streams done after $((SECONDS - start)) s"
(( rc != 0 )) && exit "$rc"
exit "$rc2"
