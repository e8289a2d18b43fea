#!/usr/bin/env bash
# demo.sh: `make demo` — the seed incident, live. A real cluster on this machine: 3 control-plane
# members on their own network hosts (etcd + kube-apiserver, a load balancer in front) and 2 real
# nodes (kubelet, containerd, kube-proxy) running tenant pods that call the API through the
# kubernetes Service with the tokens their kubelet projected; then the first step of a control-plane
# roll whose new member came up with its own service-account key. Shows which member answers 401,
# what credwatch watch saw as it happened, what the real kube-apiservers logged, and credwatch
# check's diagnosis; then tears it all down. Needs root (network namespaces, containers).
set -euo pipefail
cd "$(dirname "$0")/.."
cw=${CREDWATCH:-bin/credwatch}
[[ -x $cw ]] || make build
export CREDWATCH_LAB_BIN=${CREDWATCH_LAB_BIN:-$PWD/.lab-cache/bin}
for b in v1.36.3/kube-apiserver v1.36.3/kubelet v1.36.3/kube-proxy v1.36.3/kube-scheduler v1.36.3/kube-controller-manager etcd-v3.6.16/etcd; do
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

hack/deps.sh
say "1. A healthy cluster: 3 control-plane hosts (kube-apiserver v1.36.3 + stacked etcd, one shared service-account key), a load balancer, 2 real nodes"
"$cw" lab up --dir "$dir" --members 3 --nodes 2
"$cw" lab status --dir "$dir"

say "2. Tenants: a Deployment on both nodes; its pods call the API through the kubernetes Service with the token their kubelet projected"
"$cw" lab tenant-pods deploy --dir "$dir" --replicas 2
sleep 5
"$cw" lab tenant-pods tally --dir "$dir" --since 5s

say "3. credwatch watch starts before the roll: every 2 s it asks every member, and reviews the tokens it holds (one line per change)"
"$cw" watch --kubeconfig "$dir/admin.kubeconfig" --create-probe-sa --interval 2s --live never 2>/dev/null > >(sed 's/^/  watch | /') &
watch_pid=$!
sleep 5

say "4. The roll starts: a new member joins, but it came up with its OWN service-account key (no shared sa.key on the new machine)"
"$cw" lab add-member --dir "$dir" --sa-key new
echo "watching the tenants (and credwatch watch) for ${watch_window}s..."
sleep "$watch_window"
kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null || true

say "5. What the pods saw: 401s, attributed to the member that served them (kube-proxy sent each call to one member)"
"$cw" lab tenant-pods tally --dir "$dir" --since "${watch_window}s"

say "6. What the real kube-apiservers logged (\"Unable to authenticate the request\", count per member and message)"
for log in "$dir"/logs/apiserver-*.log; do
	m=$(basename "$log" .log)
	grep -h 'Unable to authenticate the request' "$log" | sed -E 's/.*(err=.*)$/\1/' | sort | uniq -c | sed -E "s/^ *([0-9]+) /  $m  \1 x /" || true
done
newest=$(ls "$dir"/logs/apiserver-*.log | sort -V | tail -1)
echo "one line as the new member $(basename "$newest" .log) logged it:"
grep -h -m1 "Unable to authenticate the request" "$newest" | sed 's/^/  /' || true

say "7. credwatch check: ask every member directly, mint through each, review at each (the trust matrix)"
echo "(nothing but the admin kubeconfig: the members are found in the kubernetes EndpointSlice;"
echo " --create-probe-sa creates the probe service account credwatch/credwatch-probe — the only write besides TokenRequests/TokenReviews)"
"$cw" check --kubeconfig "$dir/admin.kubeconfig" --create-probe-sa || echo "(credwatch check exit code $?: 1 = findings at or above error)"

say "8. credwatch logs: the same story read from the members' logs alone"
"$cw" logs "$dir"/logs/apiserver-*.log || true

say "9. Teardown"
"$cw" lab down --dir "$dir"
trap - EXIT
rm -rf "$dir"
echo "done: the member with its own key rejected every token the others minted, and they rejected its tokens."
