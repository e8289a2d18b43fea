// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

// shimName is the executable kubectl (1.26 and later) looks up on PATH to complete the
// arguments of the plugin `kubectl credwatch`; it runs it with those arguments and the word
// being completed, and reads cobra's __complete output back.
const shimName = "kubectl_complete-credwatch"

// shim is shimName's script, in every archive: it asks credwatch for its own completions.
// kubectl-credwatch (krew's name, under which credwatch calls itself "kubectl credwatch") comes
// first, as that is the binary kubectl runs for `kubectl credwatch`; credwatch otherwise.
const shim = `#!/bin/sh
# kubectl_complete-credwatch: kubectl (1.26 and later) runs this, found on PATH, to complete
# ` + "`kubectl credwatch <TAB>`" + `; it prints credwatch's own completions of the same arguments.
if command -v kubectl-credwatch >/dev/null 2>&1; then
	exec kubectl-credwatch __complete "$@"
fi
exec credwatch __complete "$@"
`
