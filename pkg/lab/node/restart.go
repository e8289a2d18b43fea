// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"fmt"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// RestartKubelet stops the kubelet and starts it again with the same flags (a reboot of the node,
// as far as the kubelet is concerned: containers keep running). It does not wait for anything;
// KubeletExited reports whether the new process has ended since.
func (n *Node) RestartKubelet() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped || n.holder == nil {
		return fmt.Errorf("node %s is not running", n.cfg.Name)
	}
	if n.supervised != nil { // a kubeadm host or a kubelet service: its supervisor starts the kubelet again
		n.supervised.Current().Stop(n.cfg.StopGrace)
		return nil
	}
	n.kubelet.Stop(n.cfg.StopGrace)
	p, err := n.startInNode("kubelet", n.cfg.Kubelet, n.cfg.kubeletArgs()...)
	if err != nil {
		return err
	}
	n.kubelet = p
	return nil
}

// KubeletExited reports whether the current kubelet process has ended, with the last lines of its
// log and its exit error.
func (n *Node) KubeletExited() (exited bool, logTail string, exitErr error) {
	n.mu.Lock()
	p := n.currentKubelet()
	n.mu.Unlock()
	done, err := p.Exited()
	if !done {
		return false, "", nil
	}
	return true, proc.Tail(p.LogFile, 20), err
}

// KubeletRestarts is how many times the kubelet's supervisor (a kubeadm host's, or the service of
// Config.KubeletRestart) started it again, and how its last run ended ("" when it never exited);
// 0 and "" for a kubelet without one.
func (n *Node) KubeletRestarts() (restarts int, lastExit string) {
	n.mu.Lock()
	r := n.supervised
	n.mu.Unlock()
	if r == nil {
		return 0, ""
	}
	return r.Restarts()
}
