package lab

import (
	"context"
	"fmt"
)

// CloudControllerManagerLogFile is the cloud controller manager's log.
func (l *Lab) CloudControllerManagerLogFile() string {
	return l.path("logs", "cloud-controller-manager.log")
}

// StartCloudControllerManager starts the lab's cloud controller manager (CloudControllerManager
// of DefaultVersion, hack/labbin/ccm) with the admin kubeconfig, leader election (lease
// kube-system/cloud-controller-manager), the node and node-lifecycle controllers, and
// --cloud-provider=vsphere --cloud-config=cloudConfig; it waits until it is healthy.
func (l *Lab) StartCloudControllerManager(ctx context.Context, cloudConfig string) error {
	l.mu.Lock()
	running := l.ccm != nil
	if running {
		running, _ = l.ccm.Exited()
		running = !running
	}
	l.mu.Unlock()
	if running {
		return nil
	}
	bin, err := Binary(l.o.BinDir, DefaultVersion, CloudControllerManager)
	if err != nil {
		return err
	}
	ip := l.controllerIP()
	port, err := l.freePort(ip, 10258, "cloud-controller-manager")
	if err != nil {
		return err
	}
	args := []string{
		"--kubeconfig=" + l.AdminKubeconfig(),
		"--authentication-kubeconfig=" + l.AdminKubeconfig(),
		"--authorization-kubeconfig=" + l.AdminKubeconfig(),
		"--bind-address=" + ip,
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + l.path("pki", "cloud-controller-manager-serving"),
		"--leader-elect=true",
		"--controllers=cloud-node,cloud-node-lifecycle",
		"--cloud-provider=vsphere",
		"--cloud-config=" + cloudConfig,
		"--profiling=false",
	}
	p, err := startProc("cloud-controller-manager", "", bin, args, l.CloudControllerManagerLogFile())
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.ccm = p
	l.logs["cloud-controller-manager"] = l.CloudControllerManagerLogFile()
	l.mu.Unlock()
	return l.waitHealthy(ctx, "cloud-controller-manager", p, fmt.Sprintf("https://%s:%d/healthz", ip, port))
}

// StopCloudControllerManager stops the cloud controller manager (SIGTERM, SIGKILL after a
// bounded wait).
func (l *Lab) StopCloudControllerManager() {
	l.mu.Lock()
	p := l.ccm
	l.ccm = nil
	l.mu.Unlock()
	p.Stop(stopGrace)
	l.logf("lab: cloud-controller-manager stopped")
}
