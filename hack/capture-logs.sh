#!/usr/bin/env bash
# capture-logs.sh: run every lab scenario on both kube-apiserver lines and store what each member
# logged during it (trimmed to warnings, errors and authentication lines) plus the evidence:
#   pkg/logs/testdata/lab/<version>/<scenario>/<member>.log and evidence.json
# The logs package uses these as test data. Takes ~15 minutes; holds the lab lock.
# The generator is TestCaptureLogs in pkg/lab/scenario, built only with -tags capture.
# Usage: hack/capture-logs.sh [OUTDIR]   (CREDWATCH_SCENARIOS=a,b limits the scenarios; a name
# that is no scenario fails the run)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-pkg/logs/testdata/lab}")
export CREDWATCH_LAB_BIN=${CREDWATCH_LAB_BIN:-$PWD/.lab-cache/bin}
for b in v1.36.3/kube-apiserver v1.30.14/kube-apiserver etcd-v3.6.16/etcd; do
	[[ -x $CREDWATCH_LAB_BIN/$b ]] || { echo "capture-logs: $CREDWATCH_LAB_BIN/$b missing; building (make lab-binaries)" >&2; make lab-binaries; break; }
done
mkdir -p "$out"
echo "capture-logs: writing into $out" >&2
log=$(mktemp /tmp/capture-logs.XXXXXX)
rc=0
CREDWATCH_CAPTURE_DIR=$out flock /tmp/credwatch-lab.lock \
	go test -tags capture -count=1 -timeout 45m -run '^TestCaptureLogs$' -v ./pkg/lab/scenario/ >"$log" 2>&1 || rc=$?
grep -E '^(--- |\s+--- |PASS|FAIL|ok)|captured ' "$log" >&2 || true
if [[ $rc != 0 ]]; then
	echo "capture-logs: go test failed (exit $rc); full output in $log" >&2
	exit "$rc"
fi
rm -f "$log"
find "$out" -name '*.log' -size +200k -printf 'capture-logs: %p is over 200 KB\n' >&2
du -sh "$out" >&2
