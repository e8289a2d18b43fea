#!/usr/bin/env bash
# bench-lab.sh [MEMBERS]: wall time of `credwatch lab up` (MEMBERS apiservers + MEMBERS etcd, cached
# binaries) and the sum of RSS of the lab's processes once it is up. Holds the lab lock.
set -euo pipefail
cd "$(dirname "$0")/.."
members="${1:-3}"
export CREDWATCH_LAB_BIN="${CREDWATCH_LAB_BIN:-$PWD/.lab-cache/bin}"
bin="$(mktemp -d)/credwatch"
go build -o "$bin" ./cmd/credwatch
dir="$(mktemp -d)/lab"
cleanup() { "$bin" lab down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$(dirname "$dir")" "$(dirname "$bin")"; }
trap cleanup EXIT
exec 9>/tmp/credwatch-lab.lock
flock 9
t0=$(date +%s.%N)
"$bin" lab up --dir "$dir" --members "$members" --etcd-members "$members" >/dev/null 2>&1
t1=$(date +%s.%N)
sleep 5
pids=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(" ".join(str(p) for p in [m["pid"] for m in s["members"]]+[e["pid"] for e in s["etcd"]]))' "$dir/state.json")
rss_kb=0; api_kb=0; etcd_kb=0
for p in $pids; do
  kb=$(awk '/^VmRSS:/{print $2}' "/proc/$p/status")
  rss_kb=$((rss_kb + kb))
  if grep -q kube-apiserver "/proc/$p/cmdline"; then api_kb=$((api_kb + kb)); else etcd_kb=$((etcd_kb + kb)); fi
done
sup=$("$bin" lab status --dir "$dir" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["supervisorPID"])')
sup_kb=$(awk '/^VmRSS:/{print $2}' "/proc/$sup/status")
printf 'lab up (%s apiservers + %s etcd, cached binaries): %s s wall\n' "$members" "$members" "$(python3 -c "print(round($t1 - $t0, 1))")"
printf 'RSS of the lab processes: %d MiB total (apiservers %d MiB, etcd %d MiB; plus supervisor with LB %d MiB)\n' $((rss_kb / 1024)) $((api_kb / 1024)) $((etcd_kb / 1024)) $((sup_kb / 1024))

# The whole cluster: MEMBERS members + 2 real nodes (kubelet, containerd, kube-proxy), images cached
# after the first run. Issue budget: ready in ≤ 90 s on the 2-core machine.
"$bin" lab down --dir "$dir" >/dev/null 2>&1 || true
t0=$(date +%s.%N)
"$bin" lab up --dir "$dir" --members "$members" --nodes 2 >/dev/null 2>&1
t1=$(date +%s.%N)
node_kb=0
for p in $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(" ".join(str(p) for n in s.get("nodes",[]) for p in n.get("pids",{}).values()))' "$dir/state.json"); do
  kb=$(awk '/^VmRSS:/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
  node_kb=$((node_kb + kb))
done
printf 'lab up --members %s --nodes 2 (cached binaries and images): %s s wall until both nodes are Ready; node processes %d MiB RSS\n' "$members" "$(python3 -c "print(round($t1 - $t0, 1))")" $((node_kb / 1024))
