#!/usr/bin/env bash
# demo-offline.sh: an honest walkthrough of credwatch's token and key forensics, offline, on
# material this script generates itself. No cluster is involved and nothing is written to one:
# keys come from openssl, tokens from `credwatch token mint`, which signs them exactly as
# kube-apiserver does (claims layout, kid, alg). Every verdict shown is credwatch's prediction
# of what kube-apiserver of that line would decide and log; the lab (make demo, later) checks
# the same things against real kube-apiserver processes.
#
# Usage: hack/demo-offline.sh [path/to/credwatch]   (default bin/credwatch, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-bin/credwatch}"
if [[ ! -x "$bin" ]]; then
  go build -o "$bin" ./cmd/credwatch
fi
command -v openssl >/dev/null || { echo "demo-offline: openssl is needed to generate keys" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [[ -t 1 ]]; then b=$'\e[1m'; n=$'\e[0m'; else b=""; n=""; fi
step() { printf '\n%s== %s%s\n' "$b" "$*" "$n"; }
# run prints a command (paths shortened) and its output; a non-zero exit is shown, not fatal.
run() {
  printf '%s$ credwatch %s%s\n' "$b" "$(echo "$*" | sed "s|$work/||g")" "$n"
  local rc=0
  "$bin" "$@" >"$work/out" 2>&1 || rc=$?
  sed "s|$work/||g" "$work/out"
  [[ $rc -eq 0 ]] || printf '(exit status %d)\n' "$rc"
}
# verdict shows only the lines that name the verdict, cause and log text.
verdict() {
  printf '%s$ credwatch %s%s\n' "$b" "$(echo "$*" | sed "s|$work/||g")" "$n"
  local rc=0
  "$bin" "$@" >"$work/out" 2>&1 || rc=$?
  grep -E '^(Verdict|Cause|Message|Log line):' "$work/out" | sed "s|$work/||g"
  printf '(exit status %d)\n' "$rc"
}

iss=https://kubernetes.default.svc.cluster.local
old=https://old-issuer.example.com

step "1. Key material: the shared service-account key (members A and B) and a drifted one (member C regenerated its sa.key on join)"
openssl genrsa -out "$work/sa.key" 2048 2>/dev/null
openssl rsa -in "$work/sa.key" -pubout -out "$work/sa.pub" 2>/dev/null
openssl genrsa -out "$work/c-sa.key" 2048 2>/dev/null
openssl rsa -in "$work/c-sa.key" -pubout -out "$work/c-sa.pub" 2>/dev/null
echo "generated sa.key/sa.pub and c-sa.key/c-sa.pub with openssl"
run keys id "$work/sa.pub" "$work/c-sa.pub"

step "2. What members publish at /openid/v1/jwks, and the drift between A and C"
"$bin" keys jwks "$work/sa.pub" >"$work/a.jwks"
"$bin" keys jwks "$work/c-sa.pub" >"$work/c.jwks"
echo "member A's JWKS (credwatch keys jwks sa.pub): $(cut -c1-100 "$work/a.jwks")..."
run keys diff "$work/a.jwks" "$work/c.jwks"
run keys diff "$work/sa.key" "$work/a.jwks"

step "3. Tokens minted as kube-apiserver mints them (offline; object names and UIDs are made up)"
common=(--serviceaccount app:4f2c9a1e-0b7d-4c55-9e0f-5a1c2b3d4e5f --pod web-0:8d1e7b3c-2f4a-4b6c-8d9e-0a1b2c3d4e5f --node node-a:2a9f0c1d-3e4f-4a5b-8c6d-7e8f9a0b1c2d)
"$bin" token mint --key "$work/sa.key" --issuer "$iss" "${common[@]}" --lifetime 3607s --extended --out "$work/a.jwt" >/dev/null
"$bin" token mint --key "$work/c-sa.key" --issuer "$iss" "${common[@]}" --out "$work/c.jwt" >/dev/null
"$bin" token mint --key "$work/sa.key" --issuer "$old" "${common[@]}" --iat -30m --out "$work/old.jwt" >/dev/null
"$bin" token mint --key "$work/sa.key" --issuer "$iss" "${common[@]}" --lifetime 1h --iat -2h --out "$work/expired.jwt" >/dev/null
"$bin" token mint --key "$work/sa.key" --issuer "$iss" "${common[@]}" --iat +3m --out "$work/skew.jwt" >/dev/null
"$bin" token mint --key "$work/c-sa.key" --issuer "$iss" "${common[@]}" --no-kid --out "$work/nokid.jwt" >/dev/null
"$bin" token mint --key "$work/c-sa.key" --legacy --secret app-token-x7k2p --serviceaccount app:4f2c9a1e-0b7d-4c55-9e0f-5a1c2b3d4e5f --out "$work/legacy.jwt" >/dev/null
echo "a.jwt        pod token from member A (the admission plugin's 3607-s request, extended to a year)"
echo "c.jwt        pod token from member C (drifted key)"
echo "old.jwt      pod token from before the issuer changed to $iss"
echo "expired.jwt  a 1-h token issued 2 h ago that a client never re-read"
echo "skew.jwt     a token from a member whose clock runs 3 min ahead"
echo "nokid.jwt    a token from member C without a kid header (every key is tried, on every line)"
echo "legacy.jwt   a secret-based token signed by the drifted kube-controller-manager key"
run token inspect "$work/a.jwt"

step "4. What member A (--service-account-key-file=sa.pub, --service-account-issuer=$iss) says, on 1.36 and on 1.30"
for line in 1.36 1.30; do
  for t in a c old expired skew nokid legacy; do
    verdict token verify "$work/$t.jwt" --key "$work/sa.pub" --issuer "$iss" --kube-version "$line"
  done
done

step "5. The go-jose spelling changed in 1.33 (square/go-jose -> go-jose/go-jose)"
for line in 1.32 1.33; do
  verdict token verify "$work/nokid.jwt" --key "$work/sa.pub" --issuer "$iss" --kube-version "$line"
done

step "5b. One verdict in full, two hours on: steps, what only a cluster can check, the stale token"
run token verify "$work/a.jwt" --key "$work/sa.pub" --issuer "$iss" --at +2h

step "6. The remedies, checked: trust both public keys; keep the old issuer as a second issuer"
verdict token verify "$work/c.jwt" --key "$work/sa.pub" --key "$work/c-sa.pub" --issuer "$iss"
verdict token verify "$work/old.jwt" --key "$work/sa.pub" --issuer "$iss" --issuer "$old"
verdict token verify "$work/old.jwt" --key "$work/sa.pub" --issuer "$iss" --issuer "$old" --audience "$iss"
echo
echo "The last one shows why the old issuer alone is not enough when --api-audiences is set to the new issuer only."
echo "Done: everything above ran offline on generated material (removed on exit)."
