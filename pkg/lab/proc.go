// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"os"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// startProc starts bin with args as a child of the lab (package proc), its output appended to
// logFile. With netns set, it runs inside that network namespace (through nsenter, which execs
// bin, so the pid is bin's).
func startProc(name, netns, bin string, args []string, logFile string) (*proc.Proc, error) {
	return proc.Start(procSpec(name, netns, bin, args, logFile))
}

// procSpec is how the lab runs a binary: in the network namespace netns ("" for the caller's)
// with at most two Go threads running.
func procSpec(name, netns, bin string, args []string, logFile string) proc.Spec {
	if netns != "" {
		args = append([]string{"--net=" + netns, "--", bin}, args...)
		bin = "nsenter"
	}
	return proc.Spec{Name: name, Bin: bin, Args: args, LogFile: logFile, Env: append(os.Environ(), "GOMAXPROCS=2")}
}
