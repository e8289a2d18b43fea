#!/usr/bin/env bash
# stop.sh DIR: stop the Keystone that start.sh DIR started (SIGTERM, then SIGKILL after 10 s).
set -euo pipefail
dir=${1:?usage: stop.sh DIR}
[[ -f $dir/uwsgi.pid ]] || exit 0
pid=$(cat "$dir/uwsgi.pid")
kill "$pid" 2>/dev/null || exit 0
for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
kill -9 "$pid" 2>/dev/null || true
