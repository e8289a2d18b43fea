#!/usr/bin/env bash
# bench-check.sh: the two budgets of `credwatch check` (issue 4), printed as figures.
#  1. BenchmarkCheckLab: a full check of a 3-member lab (target <= 3 s wall per check).
#  2. The inventory of a lab populated with 10,000 pods, 3,000 service accounts and 5,000 legacy
#     token Secrets (hack/populate-lab): wall time and peak RSS of the credwatch process
#     (targets <= 10 s, <= 300 MB).
# Holds the lab lock while labs run. Env: PODS SAS SECRETS to scale the inventory.
set -euo pipefail
cd "$(dirname "$0")/.."
PODS=${PODS:-10000} SAS=${SAS:-3000} SECRETS=${SECRETS:-5000}
LOCK=/tmp/credwatch-lab.lock

echo "-- full check of a 3-member lab"
CREDWATCH_BENCH_LAB=1 flock "$LOCK" go test -run '^$' -bench '^BenchmarkCheckLab$' -benchtime 5x -count 1 ./pkg/check/ 2>&1 | grep -E '^(Benchmark|ok|FAIL)' || true

go build -o bin/credwatch ./cmd/credwatch
dir=$(mktemp -d /tmp/cw-bench-check.XXXXXX)
exec 9>"$LOCK"
flock 9
cleanup() { bin/credwatch lab down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
bin/credwatch lab up --dir "$dir" --members 3 >/dev/null
echo "-- populating: $PODS pods, $SAS service accounts, $SECRETS legacy token secrets"
go run ./hack/populate-lab --lab-dir "$dir" --pods "$PODS" --serviceaccounts "$SAS" --legacy-secrets "$SECRETS"
mapfile -t eps < <(go run ./hack/populate-lab --lab-dir "$dir" --print-endpoints)
kc="$dir/admin.kubeconfig"
bin/credwatch check --kubeconfig "$kc" "${eps[@]}" --create-probe-sa -o json >/dev/null || true # warm-up, probe account
cmd=(bin/credwatch check --kubeconfig "$kc" "${eps[@]}" -o json)
echo "-- inventory: ${cmd[*]}"
for i in 1 2 3; do
  /usr/bin/time -f "run $i: wall %e s, max RSS %M KB, exit %x" "${cmd[@]}" >"$dir/report.json" || true
done
python3 - "$dir/report.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
i = r["inventory"]
print(f"report: {i['pods']} pods, {i['serviceAccounts']} service accounts, {i['legacySecrets']} legacy secrets "
      f"({i['legacySecretsUsed']} used, {i['legacySecretsMounted']} mounted), findings: {[f['id'] for f in r['findings']]}")
PY
