#!/usr/bin/env bash
# bench-check.sh: the two budgets of `credwatch check` (issues 4 and 27), printed as figures.
#  1. BenchmarkCheckLab: a full check of a 3-member lab (target <= 3 s wall per check), and
#     BenchmarkCheckRollLab: 5 members mid-roll, one joined, then one storage-less (<= 1 s; the
#     storage-less member at most one --timeout).
#  2. The check of a lab populated by hack/populate-lab, at each pod count of POINTS (the curve),
#     with nodes, service accounts and legacy token Secrets in the proportions of Kubernetes'
#     envelope at the largest (150,000 pods: NODES=5000, SAS=30000, SECRETS=50000): wall time and
#     peak RSS of the credwatch process and the requests the apiservers served for it, RUNS runs
#     each (default 5; targets at 150,000 pods: every run <= 10 s and <= 300 MB), with how each
#     list was read.
# At Kubernetes' envelope the lab's host is the limit, not check: each member holds every object
# in its watch cache, and three members on one 24 GiB host grew to 6.2-9.0 GB each until the page
# cache went (a check took 142 s); with a 5 GiB Go memory limit each (MEMBER_GOMEMLIMIT) their
# collections of 3-GB live heaps took 11-25 s of CPU per check, beside check on the same 2 cores
# (docs/dev/bench/2026-check.md, 2026-12-07). MEMBERS=1 measures the envelope as a control
# plane whose members have a host each would serve it: one member, all of the host.
# Env: POINTS (pod counts, ascending; default 10000), NODES SAS SECRETS (at 150,000 pods, scaled
# to each point), BASELINE (another credwatch binary measured beside bin/credwatch, e.g. main's),
# MEMBERS (the lab's members; default 3), MEMBER_GOMEMLIMIT (their Go memory limit, e.g. 5GiB;
# default none), CHECK_ARGS (more flags for the measured checks, e.g. --disable-compression),
# LAB_DIR (a lab that is up already: populated further and left up, so a long curve can be run
# in parts; without it a lab is started and removed), SKIP_GO_BENCH=1 (only the populated labs).
# Holds the lab lock while labs run.
set -euo pipefail
cd "$(dirname "$0")/.."
POINTS=${POINTS:-10000} NODES=${NODES:-5000} SAS=${SAS:-30000} SECRETS=${SECRETS:-50000}
MEMBERS=${MEMBERS:-3}
source hack/lib/benchlab.sh

if [[ -z ${SKIP_GO_BENCH:-} ]]; then
  echo "-- full check of a 3-member lab"
  bench_go BenchmarkCheckLab ./pkg/check/ 5x
  echo "-- check in a 5-member roll: one joined, then one storage-less (target <= 1 s; one timeout)"
  bench_go BenchmarkCheckRollLab ./pkg/check/ 5x
fi

if [[ -n ${LAB_DIR:-} ]]; then
  go build -o bin/credwatch ./cmd/credwatch
  dir=$LAB_DIR kc=$LAB_DIR/admin.kubeconfig
  exec 9>"$LAB_LOCK"
  flock 9
else
  bench_lab_up check "$MEMBERS"
fi
go build -o "$dir/populate-lab" ./hack/populate-lab
mapfile -t eps < <("$dir/populate-lab" --lab-dir "$dir" --print-endpoints)
requests() { "$dir/populate-lab" --lab-dir "$dir" --print-requests; }

# lab_pids KIND...: the process ids the lab's state.json records for members and/or etcd (this
# lab's only: other labs on the host are not counted).
lab_pids() {
  python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(" ".join(str(p["pid"]) for k in sys.argv[2:] for p in s.get(k) or [] if p.get("pid")))' "$dir/state.json" "$@"
}

# server_cpu: the CPU the lab's apiservers and etcd members have used, in clock ticks (a check's
# lists cost the member that serves them more CPU than the check; on a shared host that is the
# check's wall time too).
server_cpu() {
  local t=0 p
  for p in $(lab_pids members etcd); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}

# members_rss: the lab's apiservers' summed RSS.
members_rss() {
  local p
  for p in $(lab_pids members); do awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null; done |
    awk '{s += $1} END {printf "%.1f GB", s / 1e6}'
}

# measure NAME BINARY: RUNS timed checks; the requests are the members' apiserver_request_total
# difference across the run, less the 3 /metrics reads that measure it.
measure() {
  local r0 r1
  for ((i = 1; i <= ${RUNS:-5}; i++)); do
    r0=$(requests) c0=$(server_cpu)
    /usr/bin/time -o "$dir/time.txt" -f "wall %e s, max RSS %M KB, exit %x" \
      "$2" check --kubeconfig "$kc" "${eps[@]}" ${CHECK_ARGS:-} -o json >"$dir/report.json" 2>/dev/null || true
    r1=$(requests) c1=$(server_cpu)
    echo "$1 run $i: $(tail -1 "$dir/time.txt"), requests $(python3 -c "print(int($r1 - $r0 - ${#eps[@]}))"), members' CPU $(python3 -c "print(f'{($c1 - $c0) / $(getconf CLK_TCK):.1f} s')"), apiservers' RSS $(members_rss), available $(free -m | awk '/^Mem:/ {print $7}') MB, reads $(python3 -c '
import json, sys
try:
    r = json.load(open(sys.argv[1])).get("inventory", {}).get("reads") or {}
except ValueError:
    r = {}
print(", ".join(f"{k}: {v}" for k, v in sorted(r.items())) or "unknown")' "$dir/report.json")"
  done
  python3 - "$dir/report.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
i, l = r["inventory"], r.get("liveness", {})
print(f"  report: {i['pods']} pods, {l.get('nodes')} nodes, {i['serviceAccounts']} service accounts, "
      f"{i['legacySecrets']} legacy secrets ({i['legacySecretsUsed']} used, {i['legacySecretsMounted']} mounted), "
      f"findings: {sorted(f['id'] for f in r['findings'])}, unavailable: {sorted(r.get('unavailable') or {})}")
PY
}

for pods in $POINTS; do
  nodes=$((NODES * pods / 150000)) sas=$((SAS * pods / 150000)) secrets=$((SECRETS * pods / 150000))
  echo "-- populating: $pods pods on $nodes nodes, $sas service accounts, $secrets legacy token secrets"
  "$dir/populate-lab" --lab-dir "$dir" --pods "$pods" --nodes "$nodes" --serviceaccounts "$sas" --legacy-secrets "$secrets"
  bin/credwatch check --kubeconfig "$kc" "${eps[@]}" --create-probe-sa -o json >/dev/null 2>&1 || true # warm-up, probe account
  echo "-- check at $pods pods: bin/credwatch check --kubeconfig $kc ${eps[*]} -o json"
  measure "$pods pods" bin/credwatch
  if [[ -n ${BASELINE:-} ]]; then measure "$pods pods, baseline" "$BASELINE"; fi
done
