#!/usr/bin/env bash
# bench.sh: print every speed and memory figure credwatch tracks. `make bench` runs it.
#  1. Go benchmarks (token decode/verify, log classification, check logic) with -benchmem; with
#     make capi-binaries also one Cluster API roll and its phases (BenchmarkCAPIRoll, ~4 min)
#  1b. the lab binaries' builds as hack/labbin/build*.sh recorded them (the first is the cold one)
#  2. hack/bench-lab.sh   — lab up wall time and the lab's summed RSS (needs the lab binaries)
#  3. hack/bench-logs.sh  — 1 GB log throughput vs ripgrep and grep, peak RSS
#  4. hack/bench-check.sh — full check wall time; inventory of a populated lab (time, RSS)
#  5. hack/bench-watch.sh — CPU of one watch interval; the watch process at --interval 1s (CPU share, RSS)
set -uo pipefail
cd "$(dirname "$0")/.."
echo "== Go benchmarks"
go test -run '^$' -bench . -benchmem -benchtime 1x -count 1 ./pkg/... 2>&1 | grep -E '^(Benchmark|ok|FAIL|goos|pkg)' || true
go test -run '^$' -bench . -benchmem ./pkg/token/... ./pkg/keys/... ./pkg/logs/... 2>&1 | grep -E '^Benchmark' || true
echo "== lab binaries: each build as hack/labbin/build*.sh recorded it on this machine"
times="${CREDWATCH_LAB_SHARED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/credwatch/lab-bin}/build-times.tsv"
if [[ -s $times ]]; then cat "$times"; else echo "none recorded here (built before the record began, or copied): docs/dev/bench/2026-build.md has the cold build per binary"; fi
for s in bench-lab bench-logs bench-check bench-watch; do
  if [[ -x hack/$s.sh ]]; then echo "== $s"; hack/$s.sh || echo "$s: failed (exit $?)"; fi
done
