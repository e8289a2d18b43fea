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
source hack/lib/benchlab.sh

echo "-- full check of a 3-member lab"
bench_go BenchmarkCheckLab ./pkg/check/ 5x

bench_lab_up check 3
echo "-- populating: $PODS pods, $SAS service accounts, $SECRETS legacy token secrets"
go run ./hack/populate-lab --lab-dir "$dir" --pods "$PODS" --serviceaccounts "$SAS" --legacy-secrets "$SECRETS"
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
