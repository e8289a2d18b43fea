#!/usr/bin/env bash
# soak.sh: an accelerated soak of `credwatch watch` (issue 11; `make soak`, not in `make test`).
# A 3-member lab; credwatch watch --interval 1s for SOAK_MINUTES (default 30) following the lab's
# members; a healthy `lab roll` every ROLL_EVERY seconds (default 120); every SAMPLE seconds
# (default 30) the watch's RSS (/proc) and goroutine count (its --listen /metrics) are sampled;
# the roll runs in the background so sampling keeps its pace. Passes when both are flat after
# warm-up (the first WARMUP seconds, default 300): the median of the last WINDOW samples (default
# 10) at most 10 % above the median of the first WINDOW samples after warm-up. Medians, not single
# samples: a sample taken during an interval counts its in-flight requests (goroutines 9 between
# intervals, about 19 during one) and garbage not yet collected (RSS); a leak moves the median. Holds the lab lock (SOAK_LOCK, default
# /tmp/credwatch-lab.lock) throughout; SOAK_LOCK= runs without it (the lab reserves its own
# network index 127.0.x.1:6443 / 10.200.x.0/24, so it does not collide with lab tests running then).
set -euo pipefail
cd "$(dirname "$0")/.."
SOAK_MINUTES=${SOAK_MINUTES:-30} ROLL_EVERY=${ROLL_EVERY:-120} SAMPLE=${SAMPLE:-30} WARMUP=${WARMUP:-300} WINDOW=${WINDOW:-10}
PORT=${PORT:-19091}
LOCK=${SOAK_LOCK-/tmp/credwatch-lab.lock}
export CREDWATCH_LAB_BIN=${CREDWATCH_LAB_BIN:-$PWD/.lab-cache/bin}

go build -o bin/credwatch ./cmd/credwatch
dir=$(mktemp -d /tmp/cw-soak.XXXXXX)
if [[ -n $LOCK ]]; then
  exec 9>"$LOCK"
  flock 9
fi
watch_pid="" roll_pid=""
cleanup() {
  [[ -n $roll_pid ]] && wait "$roll_pid" 2>/dev/null || true
  [[ -n $watch_pid ]] && kill "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null || true
  bin/credwatch lab down --dir "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir/etcd" # gigabytes after 14 rolls; the samples, events and report stay
}
trap cleanup EXIT
bin/credwatch lab up --dir "$dir" --members 3 >/dev/null
kc="$dir/admin.kubeconfig"
bin/credwatch watch --kubeconfig "$kc" --lab "$dir" --create-probe-sa --interval 1s --duration "${SOAK_MINUTES}m" \
  --listen "127.0.0.1:$PORT" -o json --report "$dir/soak.html" >"$dir/events.jsonl" 2>"$dir/watch.stderr" &
watch_pid=$!
echo "soak: lab in $dir, watch pid $watch_pid, ${SOAK_MINUTES} min, roll every ${ROLL_EVERY}s, sample every ${SAMPLE}s"
start=$(date +%s) next_roll=$((start + ROLL_EVERY)) end=$((start + SOAK_MINUTES * 60))
samples="$dir/samples.tsv"
printf 't_s\trss_kb\tgoroutines\n' >"$samples"
while (( $(date +%s) < end )) && kill -0 "$watch_pid" 2>/dev/null; do
  now=$(date +%s)
  if (( now >= next_roll )) && ! { [[ -n $roll_pid ]] && kill -0 "$roll_pid" 2>/dev/null; }; then
    [[ -n $roll_pid ]] && { wait "$roll_pid" || echo "soak: the roll started before $((now - start)) s failed"; }
    t_roll=$((now - start))
    (bin/credwatch lab roll --dir "$dir" >/dev/null 2>&1 && echo "soak: roll at ${t_roll} s took $(($(date +%s) - now)) s") &
    roll_pid=$!
    next_roll=$((next_roll + ROLL_EVERY))
  fi
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$watch_pid/status" 2>/dev/null || echo 0)
  gor=$(curl -fsS "http://127.0.0.1:$PORT/metrics" 2>/dev/null | awk '/^go_goroutines / {print $2}' || echo 0)
  printf '%d\t%s\t%s\n' "$((now - start))" "$rss" "${gor:-0}" | tee -a "$samples"
  sleep $((SAMPLE - ($(date +%s) - now) % SAMPLE))
done
[[ -n $roll_pid ]] && { wait "$roll_pid" || true; }
roll_pid=""
wait "$watch_pid" || true
watch_pid=""
tail -1 "$dir/watch.stderr"
echo "events: $(wc -l <"$dir/events.jsonl") lines; by kind:"
python3 - "$dir/events.jsonl" <<'PY'
import collections, json, sys
c = collections.Counter((e["kind"], e.get("id", "")) for e in map(json.loads, open(sys.argv[1])))
for (k, i), n in sorted(c.items()):
    print(f"  {n:6d} {k} {i}")
PY
python3 - "$samples" "$WARMUP" "$WINDOW" <<'PY'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n")[1:] if l]
rows = [(int(t), int(r), float(g)) for t, r, g in rows]
rows = [r for r in rows if r[1] > 0 and r[2] > 0]  # a failed read (/metrics not up yet) is no sample
warm, w = [r for r in rows if r[0] >= int(sys.argv[2])], int(sys.argv[3])
if len(warm) < 2 * w:
    sys.exit(f"soak: {len(warm)} samples after warm-up, want at least {2 * w}")
first, last = warm[:w], warm[-w:]
def floor(rs, i): return min(r[i] for r in rs)
def med(rs, i): return statistics.median(r[i] for r in rs)
r0, r1, g0, g1 = med(first, 1), med(last, 1), med(first, 2), med(last, 2)
ok = r1 <= 1.1 * r0 and g1 <= 1.1 * g0
print(f"soak: start (t={rows[0][0]} s) RSS {rows[0][1]/1024:.1f} MB, goroutines {rows[0][2]:.0f}; "
      f"after warm-up ({first[0][0]}-{first[-1][0]} s) median RSS {r0/1024:.1f} MB (min {floor(first,1)/1024:.1f}), goroutines {g0:.0f} (min {floor(first,2):.0f}); "
      f"end ({last[0][0]}-{last[-1][0]} s) median RSS {r1/1024:.1f} MB (min {floor(last,1)/1024:.1f}), goroutines {g1:.0f} (min {floor(last,2):.0f}); "
      f"growth RSS {100*(r1-r0)/r0:+.1f} %, goroutines {100*(g1-g0)/max(g0,1):+.1f} %: {'flat' if ok else 'GROWING'} (limit +10 %)")
sys.exit(0 if ok else 1)
PY
