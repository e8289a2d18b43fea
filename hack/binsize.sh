#!/usr/bin/env bash
# binsize.sh BINARY: fails when the release binary (`make build`: CGO_ENABLED=0, -trimpath,
# -ldflags "-s -w", as hack/release builds it) is larger than the limit issue 21 set, 60 MB
# (60,000,000 bytes; CREDWATCH_MAX_BINARY_BYTES overrides it), or links text/template's executor.
#
# The executor (any text/template or html/template Execute) calls reflect.Value.MethodByName with
# a name known only at run time, so the linker keeps every exported method of every type
# converted to an interface: about 22 MB of client-go and k8s.io/api methods (see pkg/markup).
# Its function names stay in the stripped binary's pclntab, which is how this finds it.
set -euo pipefail
bin=${1:?usage: binsize.sh BINARY}
limit=${CREDWATCH_MAX_BINARY_BYTES:-60000000}
size=$(stat -c %s "$bin")
fail=0
if grep -q -a -F 'text/template.(*state).evalField' "$bin"; then
  echo "binsize: $bin links text/template's executor (a text/template or html/template Execute is reachable);" >&2
  echo "binsize: write the markup with pkg/markup instead: the executor keeps ~22 MB of unused methods in the binary" >&2
  fail=1
fi
if (( size > limit )); then
  echo "binsize: $bin is $size bytes, over the limit of $limit (issue 21: 60 MB, make build, stripped as released)" >&2
  echo "binsize: see what grew: go build -trimpath -o /tmp/cw ./cmd/credwatch && go tool nm -size -sort size /tmp/cw | head -50" >&2
  fail=1
fi
if (( fail == 0 )); then
  echo "binsize: $bin is $size bytes (limit $limit), no template executor"
fi
exit "$fail"
