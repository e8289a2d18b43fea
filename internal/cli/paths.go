// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"os"
	"path/filepath"
)

// Path is a file the user named, and how: the flag ("--html", "--log-file apiserver-1") or the
// argument ("argument 2") that named it, for an error to point at.
type Path struct {
	Flag string
	Path string
}

// OutputNotInput refuses (usage, exit 2) an output file that is one of the inputs: writing a
// report over the log it was made from, or a token over its signing key, destroys what may be
// the only copy. Files that exist are compared with os.SameFile, so links and other spellings
// of one file are caught; an output that does not exist yet is compared by its cleaned absolute
// path. Inputs that are empty or "-" (stdin) are skipped.
func OutputNotInput(out Path, inputs ...Path) error {
	if out.Path == "" || out.Path == "-" {
		return nil
	}
	ost, oerr := os.Stat(out.Path)
	for _, in := range inputs {
		if in.Path == "" || in.Path == "-" {
			continue
		}
		same := false
		if oerr == nil {
			ist, err := os.Stat(in.Path)
			same = err == nil && os.SameFile(ost, ist)
		} else {
			same = absClean(out.Path) == absClean(in.Path)
		}
		if same {
			return Usagef("%s %s is also %s (%s): refusing to write over an input", out.Flag, out.Path, in.Flag, in.Path)
		}
	}
	return nil
}

func absClean(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// Inputs are the kubeconfig files the flags would load, for OutputNotInput.
func (k *KubeFlags) Inputs() []Path {
	flag := "the kubeconfig"
	if k.Config.KubeConfig != nil && *k.Config.KubeConfig != "" {
		flag = "--kubeconfig"
	}
	var ps []Path
	for _, p := range k.kubeconfigPaths() {
		ps = append(ps, Path{Flag: flag, Path: p})
	}
	return ps
}
