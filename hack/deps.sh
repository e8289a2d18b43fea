#!/usr/bin/env bash
# deps.sh: install the Debian packages the test suite uses, when missing (idempotent; needs root).
#   chromium  — headless check of `credwatch logs --html` pages
#   ripgrep   — the `make bench` throughput comparison
#   python3-keystone, uwsgi-plugin-python3 — a real Keystone for `credwatch cloud` tests
#   curl, jq  — pkg/lab/keystone/start.sh creates the service user through the Keystone API
#   iproute2, iptables — the lab's network hosts (network namespaces, veths, partitions)
#   containerd, runc, containernetworking-plugins — the lab's nodes (lab up --nodes N)
set -euo pipefail
want=(chromium ripgrep python3-keystone uwsgi-plugin-python3 curl jq iproute2 iptables containerd runc containernetworking-plugins)
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then exit 0; fi
if [[ $(id -u) -ne 0 ]]; then
  echo "deps: missing Debian packages: ${missing[*]} (run as root, or install them)" >&2
  exit 0
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# policy-rc.d keeps package scripts from starting services on install.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
