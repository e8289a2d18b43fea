#!/usr/bin/env bash
# demo.sh: `make demo` — the seed incident, live. A real 3-member control plane (etcd + kube-apiserver
# behind a round-robin load balancer), tenants calling it with kubelet-style pod tokens, then the
# first step of a control-plane roll whose new member came up with its own service-account key.
# Shows which member answers 401 and what the real kube-apiservers logged, then tears it all down.
set -euo pipefail
cd "$(dirname "$0")/.."
cw=${CREDWATCH:-bin/credwatch}
[[ -x $cw ]] || make build
export CREDWATCH_LAB_BIN=${CREDWATCH_LAB_BIN:-$PWD/.lab-cache/bin}
for b in v1.36.3/kube-apiserver etcd-v3.6.16/etcd; do
	[[ -x $CREDWATCH_LAB_BIN/$b ]] || { echo "demo: lab binaries missing; building them once (make lab-binaries, a few minutes)"; make lab-binaries; break; }
done
dir=$(mktemp -d /tmp/credwatch-demo.XXXXXX)
down() {
	"$cw" lab down --dir "$dir" >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap down EXIT
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
watch_window=${DEMO_WINDOW:-20}

say "1. A healthy control plane: 3 kube-apiservers (v1.36.3), 3 stacked etcd members, one shared service-account key, a load balancer"
"$cw" lab up --dir "$dir" --members 3
"$cw" lab status --dir "$dir"

say "2. Tenants: 4 pods whose projected tokens (TokenRequest, bound to the pod) call the API through the load balancer"
"$cw" lab tenants start --dir "$dir" --pods 4 --refresh-every 5s
sleep 5
"$cw" lab tenants --dir "$dir" --reset

say "3. credwatch watch starts before the roll: every 2 s it asks every member, and reviews the tokens it holds (one line per change)"
"$cw" watch --kubeconfig "$dir/admin.kubeconfig" --lab "$dir" --create-probe-sa --interval 2s --live never 2>/dev/null > >(sed 's/^/  watch | /') &
watch_pid=$!
sleep 5

say "4. The roll starts: a new member joins, but it came up with its OWN service-account key (no shared sa.key on the new machine)"
"$cw" lab add-member --dir "$dir" --sa-key new
echo "watching the tenants (and credwatch watch) for ${watch_window}s..."
sleep "$watch_window"
kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null || true

say "5. What the pods saw: 401s, attributed to the member that served them (and the member that minted the token)"
"$cw" lab tenants --dir "$dir"

say "6. What the real kube-apiservers logged (\"Unable to authenticate the request\", count per member and message)"
for log in "$dir"/logs/apiserver-*.log; do
	m=$(basename "$log" .log)
	grep -h 'Unable to authenticate the request' "$log" | sed -E 's/.*(err=.*)$/\1/' | sort | uniq -c | sed -E "s/^ *([0-9]+) /  $m  \1 x /" || true
done
newest=$(ls "$dir"/logs/apiserver-*.log | sort -V | tail -1)
echo "one line as the new member $(basename "$newest" .log) logged it:"
grep -h -m1 "Unable to authenticate the request" "$newest" | sed 's/^/  /' || true

say "7. credwatch check: ask every member directly, mint through each, review at each (the trust matrix)"
echo "(lab members use loopback addresses, which EndpointSlices cannot hold, so they are named with --endpoint;"
echo " --create-probe-sa creates the probe service account credwatch/credwatch-probe — the only write besides TokenRequests/TokenReviews)"
eps=$("$cw" lab status --dir "$dir" -o json | python3 -c 'import json,sys; print(" ".join("--endpoint="+m["url"] for m in json.load(sys.stdin)["lab"]["members"]))')
# shellcheck disable=SC2086
"$cw" check --kubeconfig "$dir/admin.kubeconfig" $eps --create-probe-sa || echo "(credwatch check exit code $?: 1 = findings at or above error)"

say "8. credwatch logs: the same story read from the members' logs alone"
"$cw" logs "$dir"/logs/apiserver-*.log || true

say "9. Teardown"
"$cw" lab down --dir "$dir"
trap - EXIT
rm -rf "$dir"
echo "done: the member with its own key rejected every token the others minted, and they rejected its tokens."
