// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	labimage "github.com/credwatch/credwatch/pkg/lab/image"
	"github.com/credwatch/credwatch/pkg/lab/node"
)

// NodeStatus is one worker node's state.
type NodeStatus struct {
	Name       string            `json:"name"`
	IP         string            `json:"ip"`
	PodCIDR    string            `json:"podCIDR"`
	Dir        string            `json:"dir"`
	CgroupRoot string            `json:"cgroupRoot"`
	PIDs       map[string]int    `json:"pids,omitempty"`
	Logs       map[string]string `json:"logs,omitempty"`
}

type nodeProc struct {
	status NodeStatus
	n      *node.Node
}

// nodeHost is the name of node number i's host and its address (10.200.x.200+i).
func (l *Lab) nodeHost(i int) (string, netip.Addr) {
	return fmt.Sprintf("node-%d", i), netip.AddrFrom4([4]byte{10, 200, byte(l.x), byte(200 + i)})
}

// kubeletClientArgs are the flags every apiserver of a hosts-network lab gets so that it can reach
// the kubelets (logs, exec): written once, on first use.
func (l *Lab) kubeletClientArgs() ([]string, error) {
	l.kubeletArgsOnce.Do(func() {
		l.kubeletArgs, l.kubeletArgsErr = node.APIServerArgs(l.path("pki", "nodes"), l.path("pki", "ca.crt"), l.IssueCertificate)
	})
	return slices.Clone(l.kubeletArgs), l.kubeletArgsErr
}

// startNodes starts the scheduler, builds (or reuses) the lab images and starts Options.Nodes
// worker nodes concurrently, waiting until every one is Ready.
func (l *Lab) startNodes(ctx context.Context) error {
	if l.o.Nodes == 0 {
		return nil
	}
	t0 := time.Now()
	if err := l.startScheduler(ctx); err != nil {
		return err
	}
	images := l.o.Images
	var err error
	if images == "" {
		if images, err = labimage.BuildLabImages(ctx, filepath.Join(filepath.Dir(l.o.BinDir), "images")); err != nil {
			return fmt.Errorf("lab images: %w", err)
		}
	}
	l.images = images
	if l.registries, err = l.openRegistries(); err != nil {
		return err
	}
	errs := make([]error, l.o.Nodes)
	var wg sync.WaitGroup
	for i := range l.o.Nodes {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = l.addNode(ctx, true) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	l.logf("lab: %d nodes Ready after %s", l.o.Nodes, time.Since(t0).Round(time.Millisecond))
	return nil
}

// AddNode starts one more worker node and waits until it is Ready.
func (l *Lab) AddNode(ctx context.Context) (NodeStatus, error) { return l.joinNode(ctx, true) }

// StartNode starts one more worker node without waiting for it to be Ready: a node whose kubelet
// may never register (with Options.KubeletRestart, its service keeps starting it again).
func (l *Lab) StartNode(ctx context.Context) (NodeStatus, error) { return l.joinNode(ctx, false) }

func (l *Lab) joinNode(ctx context.Context, wait bool) (NodeStatus, error) {
	l.opMu.Lock()
	defer l.opMu.Unlock()
	if err := l.checkUp(); err != nil {
		return NodeStatus{}, err
	}
	if l.images == "" {
		return NodeStatus{}, fmt.Errorf("the lab was started without nodes (lab up --nodes N)")
	}
	st, err := l.addNode(ctx, wait)
	if err != nil {
		return st, err
	}
	return st, l.saveState()
}

func (l *Lab) addNode(ctx context.Context, wait bool) (NodeStatus, error) {
	if l.hosts == nil {
		return NodeStatus{}, fmt.Errorf("nodes need the hosts network (lab up --network hosts)")
	}
	kubelet, err := Binary(l.o.BinDir, l.o.Cloud.version(l.o.Version), "kubelet")
	if err != nil {
		return NodeStatus{}, err
	}
	proxy, err := Binary(l.o.BinDir, l.o.Version, "kube-proxy")
	if err != nil {
		return NodeStatus{}, err
	}
	l.mu.Lock()
	l.nNode++
	i := l.nNode
	l.mu.Unlock()
	name, addr := l.nodeHost(i)
	podCIDR, err := node.PodCIDRFor(i)
	if err != nil {
		return NodeStatus{}, err
	}
	host, err := l.hosts.AddHost(ctx, name, addr)
	if err != nil {
		return NodeStatus{}, err
	}
	st := NodeStatus{
		Name: name, IP: addr.String(), PodCIDR: podCIDR.String(), Dir: l.path("nodes", name),
		CgroupRoot: fmt.Sprintf("/credwatch-%s-%s", l.hosts.Prefix(), name),
	}
	kubeletArgs := l.o.Cloud.kubeletArgs(name)
	cp, err := l.credentialProviderArgs(name)
	if err != nil {
		return st, err
	}
	n, err := node.Start(ctx, node.Config{
		Name: name, Dir: st.Dir, Host: host, PodCIDR: podCIDR, ClusterCIDR: node.ClusterCIDR,
		APIServer: "https://" + l.LBAddress(), CAPEM: l.CA(), Issue: l.IssueCertificate,
		Kubelet: kubelet, KubeProxy: proxy, KubeletArgs: append(kubeletArgs, cp...), KubeletRestart: l.o.KubeletRestart, Images: append([]string{l.images}, l.o.ExtraImages...), Registries: l.registries, CgroupRoot: st.CgroupRoot,
		StopGrace: stopGrace, Log: l.o.Log,
	})
	if err != nil {
		return st, err
	}
	st.PIDs = n.PIDs()
	st.Logs = map[string]string{}
	for _, c := range []string{"containerd", "kubelet", "kube-proxy"} {
		st.Logs[c] = n.LogFile(c)
	}
	l.mu.Lock()
	l.nodes = append(l.nodes, &nodeProc{status: st, n: n})
	for c, f := range st.Logs {
		l.logs[name+"/"+c] = f
	}
	l.mu.Unlock()
	if err := l.routePods(ctx); err != nil {
		return st, err
	}
	if !wait {
		l.logf("lab: %s started on %s (pods %s)", name, addr, podCIDR)
		return st, nil
	}
	cs, err := kubernetes.NewForConfig(l.RESTConfig())
	if err != nil {
		return st, err
	}
	wctx, cancel := context.WithTimeout(ctx, l.o.Wait)
	defer cancel()
	if err := n.WaitReady(wctx, cs); err != nil {
		return st, err
	}
	l.logf("lab: %s Ready on %s (pods %s)", name, addr, podCIDR)
	return st, nil
}

// routePods makes every node's pod network reachable from every host (the apiservers reach pods
// through their service proxy; pods on different nodes reach each other).
func (l *Lab) routePods(ctx context.Context) error {
	l.mu.Lock()
	nodes := slices.Clone(l.nodes)
	l.mu.Unlock()
	for _, h := range l.hosts.Hosts() {
		for _, n := range nodes {
			if n.status.Name == h.Name {
				continue
			}
			if err := l.hosts.Route(ctx, h.Name, netip.MustParsePrefix(n.status.PodCIDR), netip.MustParseAddr(n.status.IP)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Nodes lists the worker nodes.
func (l *Lab) Nodes() []NodeStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []NodeStatus
	for _, n := range l.nodes {
		out = append(out, n.status)
	}
	return out
}

// stopNodes stops every node concurrently (kubelet, kube-proxy, containers, containerd) and
// removes what they left on the machine.
func (l *Lab) stopNodes(ctx context.Context) error {
	l.mu.Lock()
	nodes := l.nodes
	l.nodes = nil
	l.mu.Unlock()
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = n.n.Stop(ctx) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}
