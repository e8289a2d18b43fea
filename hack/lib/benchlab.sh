# benchlab.sh, sourced by hack/bench-check.sh and hack/bench-watch.sh: the lab lock, a Go
# benchmark that starts its own lab, and a lab of the script's own for the commands after it.
LAB_LOCK=/tmp/credwatch-lab.lock

# bench_go BENCH PKG BENCHTIME: one lab benchmark under the lab lock, its figure lines only.
bench_go() {
  CREDWATCH_BENCH_LAB=1 flock "$LAB_LOCK" go test -run '^$' -bench "^$1\$" -benchtime "$3" -count 1 "$2" 2>&1 |
    grep -E '^(Benchmark|ok|FAIL)' || true
}

# bench_lab_up NAME MEMBERS: builds bin/credwatch, takes the lab lock for the rest of the script,
# starts a lab in $dir (removed on exit) and sets $kc (its admin kubeconfig) and eps (its members).
bench_lab_up() {
  go build -o bin/credwatch ./cmd/credwatch
  dir=$(mktemp -d "/tmp/cw-bench-$1.XXXXXX")
  exec 9>"$LAB_LOCK"
  flock 9
  trap 'bin/credwatch lab down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
  # MEMBER_GOMEMLIMIT: the Go memory limit of the lab's processes (its members above all), as a
  # container's memory limit sets it; empty is none.
  GOMEMLIMIT=${MEMBER_GOMEMLIMIT:-} bin/credwatch lab up --dir "$dir" --members "$2" >/dev/null
  mapfile -t eps < <(go run ./hack/populate-lab --lab-dir "$dir" --print-endpoints)
  kc="$dir/admin.kubeconfig"
}
