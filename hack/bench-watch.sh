#!/usr/bin/env bash
# bench-watch.sh: the budget of `credwatch watch` (issue 11), printed as figures.
#  1. BenchmarkWatchIntervalLab: CPU of one interval against a 3-member lab.
#  2. The credwatch watch process at --interval 1s for DURATION (default 60 s) against a 3-member
#     lab: CPU share of one core (target <= 5 %) and max RSS.
# Holds the lab lock while labs run.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-60}
source hack/lib/benchlab.sh

echo "-- one watch interval against a 3-member lab"
bench_go BenchmarkWatchIntervalLab ./pkg/watch/ 30x

bench_lab_up watch 3
cmd=(bin/credwatch watch --kubeconfig "$kc" "${eps[@]}" --create-probe-sa --interval 1s --duration "${DURATION}s" -o json)
echo "-- ${cmd[*]}"
/usr/bin/time -f "%U %S %e %M" -o "$dir/time" "${cmd[@]}" >"$dir/events.jsonl" 2>"$dir/stderr" || true
read -r user sys wall rss <"$dir/time"
python3 - "$user" "$sys" "$wall" "$rss" "$(wc -l <"$dir/events.jsonl")" <<'PY'
import sys
u, s, w, rss, n = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
print(f"watch --interval 1s for {w:.0f} s: CPU {u+s:.2f} s = {100*(u+s)/w:.1f} % of one core (target <= 5 %), max RSS {rss/1024:.0f} MB, {n} events")
PY
tail -1 "$dir/stderr"
