// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package kubeadm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/cloudinit"
	"github.com/credwatch/credwatch/pkg/lab/hostnet"
	"github.com/credwatch/credwatch/pkg/lab/node"
)

// HostConfig is one kubeadm host: a lab node in kubeadm mode.
type HostConfig struct {
	Name    string       // the host's name: its hostname and Node name
	Dir     string       // the host's directory (emptied)
	Host    hostnet.Host // its network namespace and address on the lab network
	PodCIDR netip.Prefix // the pod subnet of its CNI bridge
	// Kubelet is the kubelet binary (the lab's v1.29.15 is within kubeadm 1.30's skew); Binaries
	// are kubeadm and crictl (FindBinaries).
	Kubelet  string
	Binaries Binaries
	Images   []string // image tarballs for its containerd (images.Build)
	// KubeletArgs are appended to the kubelet's flags (kubeadm's KUBELET_EXTRA_ARGS).
	KubeletArgs []string
	Log         io.Writer // progress lines; default discarded
}

// Host is a running kubeadm host. Its methods are safe for concurrent use.
type Host struct {
	cfg  HostConfig
	node *node.Node

	mu      sync.Mutex
	cancel  context.CancelFunc // of the bootstrap's commands
	done    chan struct{}      // closed when they have all run
	bootErr error
}

// StartHost starts the host: containerd with the images imported, the kubelet supervisor waiting
// for kubeadm. On error nothing is left running.
func StartHost(ctx context.Context, cfg HostConfig) (*Host, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	n, err := node.Start(ctx, node.Config{
		Name: cfg.Name, Dir: cfg.Dir, Host: cfg.Host, PodCIDR: cfg.PodCIDR, Kubelet: cfg.Kubelet, KubeletArgs: cfg.KubeletArgs,
		Kubeadm: &node.Kubeadm{Kubeadm: cfg.Binaries.Kubeadm, Crictl: cfg.Binaries.Crictl, Version: cfg.Binaries.Version}, Images: cfg.Images, Log: cfg.Log,
	})
	if err != nil {
		return nil, fmt.Errorf("kubeadm host %s: %w", cfg.Name, err)
	}
	return &Host{cfg: cfg, node: n}, nil
}

// Bootstrap runs a cloud-config on the host as cloud-init would: the {{ ds.meta_data.* }}
// template filled from meta, write_files written into the host, then each runcmd entry with
// `sh -c` in the host, one after the other in the background (output in the host's
// logs/cloud-init.log). A failing command does not stop the next, as in cloud-init's runcmd
// script. It returns once the files are written; BootstrapDone reports the commands' end.
func (h *Host) Bootstrap(data []byte, meta map[string]string) error {
	doc, err := cloudinit.Parse(data, meta)
	if err != nil {
		return fmt.Errorf("kubeadm host %s: bootstrap data: %w", h.cfg.Name, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done != nil {
		return fmt.Errorf("kubeadm host %s: bootstrapped already", h.cfg.Name)
	}
	root := h.node.NodePath("/")
	if root == "" {
		return fmt.Errorf("kubeadm host %s is not running", h.cfg.Name)
	}
	if err := doc.WriteFiles(root); err != nil {
		return fmt.Errorf("kubeadm host %s: bootstrap data: %w", h.cfg.Name, err)
	}
	log, err := os.OpenFile(h.node.LogFile("cloud-init"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("kubeadm host %s: %w", h.cfg.Name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go h.run(ctx, doc.Commands, log)
	return nil
}

func (h *Host) run(ctx context.Context, commands []string, log *os.File) {
	defer close(h.done)
	defer log.Close()
	var errs []error
	for i, c := range commands {
		t0 := time.Now()
		fmt.Fprintf(log, "--- runcmd[%d] (%d characters) at %s\n", i, len(c), t0.UTC().Format(time.RFC3339))
		cmd, err := h.node.Command(ctx, "/bin/sh", "-c", c)
		if err == nil {
			cmd.Stdout, cmd.Stderr = log, log
			err = cmd.Run()
		}
		fmt.Fprintf(log, "--- runcmd[%d] ended after %s: %v\n", i, time.Since(t0).Round(time.Millisecond), err)
		if err != nil {
			errs = append(errs, fmt.Errorf("runcmd[%d]: %w", i, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	h.mu.Lock()
	h.bootErr = errors.Join(errs...)
	h.mu.Unlock()
	h.logf("kubeadm host %s: bootstrap commands ended (errors: %v)", h.cfg.Name, h.bootErr)
}

// BootstrapDone reports whether the bootstrap's commands have all run, and their failures.
func (h *Host) BootstrapDone() (bool, error) {
	h.mu.Lock()
	done := h.done
	h.mu.Unlock()
	if done == nil {
		return false, nil
	}
	select {
	case <-done:
		h.mu.Lock()
		defer h.mu.Unlock()
		return true, h.bootErr
	default:
		return false, nil
	}
}

// Bootstrapped reports whether the bootstrap wrote Cluster API's success sentinel.
func (h *Host) Bootstrapped() bool {
	p := h.node.NodePath(cloudinit.Sentinel)
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}

// Name is the host's name; IP its address on the lab network.
func (h *Host) Name() string   { return h.cfg.Name }
func (h *Host) IP() netip.Addr { return h.cfg.Host.IP }

// Node is the lab node the host is.
func (h *Host) Node() *node.Node { return h.node }

// AdminKubeconfig is kubeadm's admin.conf on a host that ran `kubeadm init` (as the machine sees it).
func (h *Host) AdminKubeconfig() string {
	return h.node.EtcPath(filepath.Join("kubernetes", "admin.conf"))
}

// Stop ends the bootstrap's commands and the node (every process, mount and cgroup); it returns
// what was left behind, if anything.
func (h *Host) Stop(ctx context.Context) error {
	h.mu.Lock()
	cancel, done := h.cancel, h.done
	h.mu.Unlock()
	if cancel != nil {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
		}
	}
	return h.node.Stop(ctx)
}

func (h *Host) logf(format string, args ...any) { fmt.Fprintf(h.cfg.Log, format+"\n", args...) }
