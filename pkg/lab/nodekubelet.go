// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"fmt"

	"github.com/credwatch/credwatch/pkg/lab/node"
)

func (l *Lab) node(name string) (*node.Node, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.nodes {
		if n.status.Name == name {
			return n.n, nil
		}
	}
	return nil, fmt.Errorf("no node %q in the lab", name)
}

// RestartKubelet stops node name's kubelet and starts it again with the same flags and files (the
// node's reboot as far as the kubelet goes); it does not wait for the Node to be Ready.
func (l *Lab) RestartKubelet(name string) error {
	n, err := l.node(name)
	if err != nil {
		return err
	}
	l.logf("lab: restarting the kubelet of %s", name)
	return n.RestartKubelet()
}

// KubeletExited reports whether node name's current kubelet has ended, with the last lines of its
// log and its exit error.
func (l *Lab) KubeletExited(name string) (exited bool, logTail string, exitErr error) {
	n, err := l.node(name)
	if err != nil {
		return true, "", err
	}
	return n.KubeletExited()
}

// KubeletRestarts is how many times node name's kubelet was started again by its service
// (Options.KubeletRestart), and how its last run ended.
func (l *Lab) KubeletRestarts(name string) (restarts int, lastExit string, err error) {
	n, err := l.node(name)
	if err != nil {
		return 0, "", err
	}
	restarts, lastExit = n.KubeletRestarts()
	return restarts, lastExit, nil
}
