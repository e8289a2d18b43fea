// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// ControllerManagerLogFile is the kube-controller-manager's log.
func (l *Lab) ControllerManagerLogFile() string { return l.path("logs", "kube-controller-manager.log") }

// ControllerManagerRunning reports whether the lab's kube-controller-manager is running.
func (l *Lab) ControllerManagerRunning() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kcm == nil {
		return false
	}
	return l.kcm.Running()
}

// StartControllerManager starts a real kube-controller-manager (Options.Version) against the load
// balancer, with leader election and per-controller service-account credentials, and waits until
// it is healthy.
func (l *Lab) StartControllerManager(ctx context.Context) error {
	if l.ControllerManagerRunning() {
		return nil
	}
	bin, err := Binary(l.o.BinDir, l.o.Cloud.version(l.o.Version), "kube-controller-manager")
	if err != nil {
		return err
	}
	ip := l.controllerIP()
	port, err := l.freePort(ip, 10257, "kube-controller-manager")
	if err != nil {
		return err
	}
	args := []string{
		"--kubeconfig=" + l.path("kube-controller-manager.kubeconfig"),
		"--authentication-kubeconfig=" + l.path("kube-controller-manager.kubeconfig"),
		"--authorization-kubeconfig=" + l.path("kube-controller-manager.kubeconfig"),
		"--bind-address=" + ip,
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + l.path("pki", "kube-controller-manager-serving"),
		"--leader-elect=true",
		"--use-service-account-credentials=true",
		"--root-ca-file=" + l.path("pki", "ca.crt"),
		"--cluster-name=credwatch-lab",
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--profiling=false",
	}
	// --service-account-private-key-file turns on the legacy token controller, which signs Secret
	// tokens with that key itself (JWTTokenGenerator: k8s.io/kubernetes
	// cmd/kube-controller-manager/app/service_accounts.go at v1.36.3, lines 49-77). Members with
	// external signers verify only the keys their signers' FetchKeys return, so beside them the
	// flag goes (the controller logs "Controller is disabled because there is no private key"),
	// as a kubeadm cluster moving to a signer must drop it from the manifest too.
	if !l.o.ExternalSigner {
		args = append(args, "--service-account-private-key-file="+l.SharedSAKeyFile())
	}
	args = append(args, l.o.Cloud.controllerManagerArgs()...)
	r, err := l.startController("kube-controller-manager", bin, args, l.ControllerManagerLogFile())
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.kcm = r
	l.logs["kube-controller-manager"] = l.ControllerManagerLogFile()
	l.mu.Unlock()
	if err := l.waitHealthy(ctx, r.Current(), fmt.Sprintf("https://%s:%d/healthz", ip, port)); err != nil {
		return err
	}
	return l.saveState()
}

// startController runs a control-plane controller on the controllers' address, restarted with
// the kubelet's back-off whenever it exits (a controller that loses its lease exits), as the
// kubelet restarts a kubeadm node's static pods.
func (l *Lab) startController(name, bin string, args []string, logFile string) (*proc.Restarting, error) {
	return proc.StartRestarting(procSpec(name, "", bin, args, logFile), proc.KubeletBackoff(), proc.RestartOptions{
		Exited: func(err error, wait time.Duration) {
			l.logf("lab: %s exited (%v); restarting it in %s (the kubelet's back-off)", name, err, wait)
		},
		Started: func(p *proc.Proc) {
			l.logf("lab: %s restarted, pid %d", name, p.PID())
			_ = l.saveState()
		},
	})
}

// waitHealthy polls a control-plane component's /healthz (bounded by Options.Wait); on failure
// the error carries the tail of its log.
func (l *Lab) waitHealthy(ctx context.Context, p *proc.Proc, url string) error {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: insecureTLS(), DisableKeepAlives: true}}
	err := p.WaitUntil(ctx, "healthy", l.o.Wait, 500*time.Millisecond, func(ctx context.Context) error {
		return apiserver.Get200(ctx, c, url)
	})
	if err == nil {
		l.logf("lab: %s healthy on %s", p.Name, url)
	}
	return err
}

// StopControllerManager stops the kube-controller-manager (SIGTERM, SIGKILL after a bounded wait).
func (l *Lab) StopControllerManager(ctx context.Context) error {
	l.mu.Lock()
	r := l.kcm
	l.kcm = nil
	l.mu.Unlock()
	r.Stop(stopGrace)
	l.logf("lab: kube-controller-manager stopped")
	return l.saveState()
}
