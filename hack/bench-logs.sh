#!/usr/bin/env bash
# bench-logs.sh: throughput of `credwatch logs` on a generated 1 GB kube-apiserver log (5% auth
# lines, mixed formats: klog text of every era, klog JSON, CRI, Docker json-file, kubectl
# prefixes), next to `rg -c 'Unable to authenticate'` and `grep -c` on the same file, plus
# credwatch's peak RSS. The file lives in a temp dir that is deleted afterwards.
# Usage: hack/bench-logs.sh [SIZE]   (SIZE like 1G, 256M; env BENCH_LOG_RUNS=3 runs per tool)
# Called by hack/bench.sh (make bench).
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-${BENCH_LOG_SIZE:-1G}}
runs=${BENCH_LOG_RUNS:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/credwatch-bench-logs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

bin=$tmp/credwatch
CGO_ENABLED=0 go build -o "$bin" ./cmd/credwatch
go build -o "$tmp/loggen" ./pkg/logs/internal/loggen/cmd/loggen
log=$tmp/apiserver.log
read -r lines auth < <("$tmp/loggen" -size "$size" -o "$log")
bytes=$(stat -c %s "$log")
cat "$log" >/dev/null # warm the page cache so every tool reads from memory
echo "bench-logs: $log: $bytes bytes, $lines lines, $auth authentication lines; best of $runs runs; $(nproc) CPUs"

# measure NAME CMD...: best wall time and its peak RSS over $runs runs; prints "secs rss_kb output".
measure() {
	local best="" rss="" out=""
	for ((i = 0; i < runs; i++)); do
		/usr/bin/time -o "$tmp/time" -f '%e %M' "$@" >"$tmp/out" 2>"$tmp/err" || true
		read -r secs kb <"$tmp/time"
		if [[ -z $best ]] || awk "BEGIN{exit !($secs < $best)}"; then best=$secs rss=$kb; fi
	done
	out=$(head -c 200 "$tmp/out" | tr '\n' ' ')
	echo "$best $rss $out"
}

printf '%-44s %8s %10s %10s %s\n' TOOL SECONDS MB/s PEAK_RSS RESULT
row() {
	local name=$1 secs=$2 rss=$3 result=$4
	local mbs
	mbs=$(awk "BEGIN{ s=$secs; if (s < 0.01) s = 0.01; printf \"%.0f\", $bytes/1e6/s }")
	printf '%-44s %8s %10s %9sM %s\n' "$name" "$secs" "$mbs" "$((rss / 1024))" "$result"
	echo "$mbs" >"$tmp/mbs.$5"
}
if command -v rg >/dev/null; then
	read -r s r o < <(measure rg -c 'Unable to authenticate' "$log")
	row "rg -c 'Unable to authenticate'" "$s" "$r" "$o matching lines" rg
else
	echo "bench-logs: ripgrep not installed (hack/deps.sh installs it)" >&2
fi
read -r s r o < <(measure grep -c 'Unable to authenticate' "$log")
row "grep -c 'Unable to authenticate'" "$s" "$r" "$o matching lines" grep
read -r s r o < <(measure "$bin" logs --progress never -q -o json "$log")
failures=$(grep -o '"authFailures": [0-9]*' "$tmp/out" | head -1 | awk '{print $2}')
row "credwatch logs -o json (classify+aggregate)" "$s" "$r" "$failures auth failures classified" cw
if [[ -f $tmp/mbs.rg ]]; then
	awk -v cw="$(cat "$tmp/mbs.cw")" -v rg="$(cat "$tmp/mbs.rg")" \
		'BEGIN{ printf "credwatch runs at %.0f%% of ripgrep'"'"'s throughput (goal: at least 50%%)\n", 100*cw/rg }'
fi
if [[ $failures != "$auth" ]]; then
	echo "bench-logs: credwatch classified $failures authentication lines, the generator wrote $auth" >&2
	exit 1
fi
echo
echo "Go benchmarks (pkg/logs):"
go test -run '^$' -bench 'Classify|Gate|Analyze' -benchtime 5x ./pkg/logs | grep -E '^Benchmark'
