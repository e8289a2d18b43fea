#!/usr/bin/env bash
# bench-logs.sh: throughput of `credwatch logs` (full classification and aggregation) next to
# ripgrep's plain count `rg -c 'Unable to authenticate'` and `grep -c` on the same generated
# kube-apiserver logs (mixed formats: klog text of every era, klog JSON, CRI, Docker json-file,
# kubectl prefixes), with peak RSS, on two files:
#   sparse: 0.1 % authentication lines (a working cluster's log)
#   dense:  5 % authentication lines (an incident)
# The tools run interleaved (rg, grep, credwatch, rg, …) so that load from other processes hits
# them alike; each figure is the best of BENCH_LOG_RUNS runs. ripgrep searches one file with one
# thread whatever -j says (it parallelises over files), so its row is single-threaded; credwatch
# uses every CPU (GOMAXPROCS), and its row at GOMAXPROCS=1 is printed too. Where the CPU has
# AVX-512 VBMI (the scan's fastest loop), a row with it turned off (GODEBUG=cpu.avx512f=off: the
# AVX2 loop) says what a CPU without it would give.
# Files live in a temp dir that is deleted afterwards.
# Usage: hack/bench-logs.sh [SIZE]   (SIZE like 1G, 256M; env BENCH_LOG_RUNS=5 runs per tool)
# Called by hack/bench.sh (make bench, make bench-logs).
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-${BENCH_LOG_SIZE:-1G}}
runs=${BENCH_LOG_RUNS:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/credwatch-bench-logs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

bin=$tmp/credwatch
CGO_ENABLED=0 go build -o "$bin" ./cmd/credwatch
go build -o "$tmp/loggen" ./pkg/logs/internal/loggen/cmd/loggen
avx512=false
grep -qw avx512vbmi /proc/cpuinfo 2>/dev/null && avx512=true
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
simd=AVX2; $avx512 && simd="AVX-512 VBMI"; grep -qw avx2 /proc/cpuinfo 2>/dev/null || simd="no AVX2: the Wu-Manber scan"
echo "bench-logs: ${cpu:-unknown CPU} ($simd), $(nproc) CPUs"
command -v rg >/dev/null || { echo "bench-logs: ripgrep not installed (hack/deps.sh installs it)" >&2; exit 1; }

# run NAME CMD...: one timed run; appends "secs rss_kb" to $tmp/NAME.times, output to $tmp/NAME.out
run() {
	local name=$1 t0 t1
	shift
	t0=$(date +%s%N)
	/usr/bin/time -o "$tmp/time" -f '%M' "$@" >"$tmp/$name.out" 2>"$tmp/err" || true
	t1=$(date +%s%N)
	# GNU time puts "Command exited with non-zero status N" before the figure when the command fails.
	echo "$(awk -v d=$((t1 - t0)) 'BEGIN{printf "%.3f", d/1e9}') $(tail -1 "$tmp/time")" >>"$tmp/$name.times"
}
# best NAME: "secs rss_kb" of the fastest run
best() { sort -n "$tmp/$1.times" | head -1; }
mbs() { awk -v b="$bytes" -v s="$1" 'BEGIN{ if (s < 0.001) s = 0.001; printf "%.0f", b/1e6/s }'; }
row() { # NAME LABEL RESULT
	local secs kb
	read -r secs kb < <(best "$1")
	printf '%-46s %8s %8s %9sM  %s\n' "$2" "$secs" "$(mbs "$secs")" "$((kb / 1024))" "$3"
}

status=0
for kind in sparse dense; do
	case $kind in sparse) share=0.001 ;; dense) share=0.05 ;; esac
	log=$tmp/$kind.log
	read -r lines auth < <("$tmp/loggen" -size "$size" -auth "$share" -o "$log")
	bytes=$(stat -c %s "$log")
	cat "$log" >/dev/null # warm the page cache so every tool reads from memory
	rm -f "$tmp"/*.times
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	for ((i = 0; i < runs; i++)); do
		run rg rg -c 'Unable to authenticate' "$log"
		run grep grep -c 'Unable to authenticate' "$log"
		# --fail-on none: logs exits 1 on the causes it finds (a verdict), which is not a failure here.
		run cw "$bin" logs --progress never -q --fail-on none -o json "$log"
		run cw1 env GOMAXPROCS=1 "$bin" logs --progress never -q --fail-on none -o json "$log"
		if $avx512; then run cw2 env GODEBUG=cpu.avx512f=off "$bin" logs --progress never -q --fail-on none -o json "$log"; fi
	done
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	echo
	echo "== $kind: $bytes bytes, $lines lines, $auth authentication lines ($share); best of $runs interleaved runs; $(nproc) CPUs; load average $load0 before, $load1 after"
	printf '%-46s %8s %8s %10s  %s\n' TOOL SECONDS MB/s PEAK_RSS RESULT
	failures=$(grep -o '"authFailures": [0-9]*' "$tmp/cw.out" | head -1 | awk '{print $2}')
	row rg "rg -c 'Unable to authenticate' (1 thread)" "$(head -c 100 "$tmp/rg.out") matching lines"
	row grep "grep -c 'Unable to authenticate'" "$(head -c 100 "$tmp/grep.out") matching lines"
	row cw "credwatch logs -o json ($(nproc) CPUs)" "$failures auth failures classified"
	row cw1 "credwatch logs -o json (GOMAXPROCS=1)" ""
	if $avx512; then row cw2 "credwatch logs -o json (AVX2 scan, no AVX-512)" ""; fi
	read -r rs _ < <(best rg)
	read -r cs ckb < <(best cw)
	read -r c1 _ < <(best cw1)
	awk -v k="$kind" -v rg="$rs" -v cw="$cs" -v c1="$c1" -v rss="$((ckb / 1024))" 'BEGIN{
		printf "%s: credwatch at %.0f%% of ripgrep'"'"'s plain count (goal: at least 50%%; %.0f%% on one core), peak RSS %d MB (goal: at most 100 MB)\n",
			k, 100*rg/cw, 100*rg/c1, rss }'
	if $avx512; then
		read -r c2 _ < <(best cw2)
		awk -v k="$kind" -v rg="$rs" -v c2="$c2" 'BEGIN{ printf "%s: %.0f%% of ripgrep with the AVX2 scan (a CPU without AVX-512)\n", k, 100*rg/c2 }'
	fi
	if [[ $failures != "$auth" ]]; then
		echo "bench-logs: $kind: credwatch classified $failures authentication lines, the generator wrote $auth" >&2
		status=1
	fi
	rm -f "$log"
done
echo
# Start-up: what the runtime spends initialising packages before main, best of 5 (most of it
# libraries other commands need; Go runs every linked package's init).
for ((i = 0; i < 5; i++)); do
	printf 'x\n' | GODEBUG=inittrace=1 "$bin" logs --progress never -q --fail-on none -o json - 2>&1 >/dev/null |
		awk '$1 == "init" {t += $5; if ($5 > m[$2]) m[$2] = $5} END {printf "%.1f", t; for (p in m) if (m[p] >= 1) printf " %s=%.1fms", p, m[p]; print ""}'
done | sort -n | head -1 | awk '{printf "start-up: %s ms of package initialisation before main (GODEBUG=inittrace=1, best of 5); over 1 ms:", $1; for (i = 2; i <= NF; i++) printf " %s", $i; print ""}'
echo
echo "Go benchmarks (pkg/logs, pkg/logs/internal/scan):"
go test -run '^$' -bench 'Classify|Gate|Analyze' -benchtime 5x ./pkg/logs ./pkg/logs/internal/scan | grep -E '^Benchmark'
exit $status
