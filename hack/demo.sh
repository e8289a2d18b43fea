#!/usr/bin/env bash
# demo.sh: `make demo`. Placeholder until the live lab demo lands: the offline walkthrough.
set -euo pipefail
cd "$(dirname "$0")/.."
exec hack/demo-offline.sh
