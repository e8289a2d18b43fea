// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package toolcache finds the deploy modules' pinned tools (promtool, Prometheus, krew and
// krew's manifest validator), which hack/tools.sh builds once per machine into the shared cache
// of the lab binaries (make tools). hack/promtool and hack/krew, modules that do not require
// this one, run hack/tools.sh the same way themselves.
package toolcache

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Path returns the path of hack/tools.sh's build of the tool name, building it first when the
// cache has none for the tool's go.mod and go.sum (minutes, the first time on a machine).
// root is the repository's root.
func Path(root, name string) (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "hack", "tools.sh"), "-p", name)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools.sh -p %s: %w\n%s", name, err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}
