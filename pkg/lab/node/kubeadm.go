// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// Kubeadm makes a node a kubeadm host, as a cloud image for Cluster API is: containerd runs, the
// kubelet waits for kubeadm to configure it, and kubeadm, crictl and the kubelet are on PATH for
// the bootstrap data's `kubeadm init` or `kubeadm join` (Node.Command). Nothing of the cluster is
// written by the lab: kubeadm writes /etc/kubernetes and /var/lib/kubelet, the kubelet runs the
// static pods it finds in /etc/kubernetes/manifests.
//
// There is no systemd, so the node does what kubeadm's kubelet unit and drop-in do
// (10-kubeadm.conf): a supervisor starts the kubelet once kubeadm has written its configuration,
// with --bootstrap-kubeconfig, --kubeconfig, --config and $KUBELET_KUBEADM_ARGS from
// /var/lib/kubelet/kubeadm-flags.env, and restarts it whenever it exits (after KubeletRestartDelay;
// the unit's RestartSec is 10 s). A `systemctl` on the node's PATH answers kubeadm's calls:
// `restart kubelet` ends the kubelet so that the supervisor starts it with the new flags.
type Kubeadm struct {
	// Kubeadm and Crictl are the binaries (kubeadm 1.30 refuses to run without crictl).
	Kubeadm, Crictl string
	// Version is kubeadm's ("v1.36.3"). From 1.31 on, the kubelet refuses a cgroup v1 host
	// unless its configuration says failCgroupV1: false, which the lab's patch then sets.
	Version string
}

// KubeadmPatchesDir is where a kubeadm host holds kubeadm patches for the lab's kubelet settings
// (kubeletconfiguration+strategic.yaml): name it in {Init,Join}Configuration.patches.directory.
const KubeadmPatchesDir = "/etc/credwatch/kubeadm-patches"

// KubeletRestartDelay is how long the kubeadm host's supervisor waits before starting the kubelet
// again (systemd's RestartSec=10 in kubeadm's unit; shorter here, since kubeadm's own
// `systemctl restart kubelet` lands on it too).
const KubeletRestartDelay = time.Second

// kubeadmHiddenDirs are hidden as well on a kubeadm host: kubeadm and the static pods write /etc
// (/etc/kubernetes, the DirectoryOrCreate hostPath /etc/ssl/certs). The node's /etc starts as a
// copy of the machine's.
var kubeadmHiddenDirs = []string{"/etc"}

// hidden lists the machine directories the node's mount namespace replaces.
func (c *Config) hidden() []string {
	if c.Kubeadm == nil {
		return hiddenDirs
	}
	return append(append([]string{}, hiddenDirs...), kubeadmHiddenDirs...)
}

// binDir holds the programs a kubeadm host puts first on PATH.
func (c *Config) binDir() string { return c.path("bin") }

// kubeletPIDFile is where the supervisor's kubelet records its pid, as the node's processes see it.
const kubeletPIDFile = "/run/credwatch-kubelet.pid"

// prepareKubeadm copies the machine's /etc into the node, writes the kubelet patch, the crictl
// configuration and the PATH directory (kubeadm, crictl, kubelet, the systemctl shim).
func (c *Config) prepareKubeadm() error {
	etc := c.hostDir("/etc")
	if out, err := exec.Command("cp", "-a", "/etc/.", etc).CombinedOutput(); err != nil {
		return fmt.Errorf("node %s: copy /etc: %w: %s", c.Name, err, strings.TrimSpace(string(out)))
	}
	patch, err := c.kubeletPatch()
	if err != nil {
		return err
	}
	patches := filepath.Join(etc, strings.TrimPrefix(KubeadmPatchesDir, "/etc/"))
	if err := os.MkdirAll(patches, 0o755); err != nil {
		return fmt.Errorf("node %s: kubeadm patches: %w", c.Name, err)
	}
	hosts, err := os.ReadFile(filepath.Join(etc, "hosts"))
	if err != nil {
		return fmt.Errorf("node %s: read the copy of /etc/hosts: %w", c.Name, err)
	}
	endpoint := "unix://" + c.socket()
	files := map[string]string{
		filepath.Join(patches, "kubeletconfiguration+strategic.yaml"): string(patch),
		// The host resolves its own name (kubeadm's Hostname check), and no lookup leaves the lab:
		// the only name server is the host's loopback, where none listens.
		filepath.Join(etc, "hosts"):            string(hosts) + c.Host.IP.String() + " " + c.Name + "\n",
		filepath.Join(etc, "resolv.conf"):      "# credwatch lab host: lookups stay inside the lab\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
		filepath.Join(etc, "crictl.yaml"):      "runtime-endpoint: " + endpoint + "\nimage-endpoint: " + endpoint + "\n",
		filepath.Join(c.binDir(), "systemctl"): systemctlShim,
	}
	if err := os.MkdirAll(c.binDir(), 0o755); err != nil {
		return fmt.Errorf("node %s: bin directory: %w", c.Name, err)
	}
	for f, data := range files {
		if err := os.WriteFile(f, []byte(data), 0o755); err != nil {
			return fmt.Errorf("node %s: write %s: %w", c.Name, f, err)
		}
	}
	for name, bin := range map[string]string{"kubeadm": c.Kubeadm.Kubeadm, "crictl": c.Kubeadm.Crictl, "kubelet": c.Kubelet} {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return fmt.Errorf("node %s: %s: %w", c.Name, name, err)
		}
		if err := os.Symlink(abs, filepath.Join(c.binDir(), name)); err != nil {
			return fmt.Errorf("node %s: %s on PATH: %w", c.Name, name, err)
		}
	}
	return nil
}

// systemctlShim answers kubeadm's systemctl calls on a host without systemd (kubeadm's
// initsystem_unix.go picks systemd when a systemctl is on PATH): the kubelet is "enabled" and
// "active", restart and stop end the kubelet the supervisor runs (it starts it again).
var systemctlShim = `#!/bin/sh
# credwatch lab: what kubeadm asks of systemd, on a kubeadm host without it.
for a; do unit=$a; done
case "$1" in
  restart|stop|start|try-restart)
    if [ "$unit" = kubelet ] || [ "$unit" = kubelet.service ]; then
      [ -f ` + kubeletPIDFile + ` ] && kill "$(cat ` + kubeletPIDFile + `)" 2>/dev/null
    fi ;;
esac
exit 0
`

// kubeletSupervised is the script the supervisor runs in the node: wait for kubeadm's files (as the
// unit restarts a kubelet that fails for want of them), then exec the kubelet as the drop-in does.
func (c *Config) kubeletSupervised() string {
	args := append([]string{
		"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
		"--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--config=/var/lib/kubelet/config.yaml",
		"--v=1",
	}, c.KubeletArgs...)
	return `echo $$ > ` + kubeletPIDFile + `
until [ -f /var/lib/kubelet/config.yaml ] && [ -f /var/lib/kubelet/kubeadm-flags.env ] &&
      { [ -f /etc/kubernetes/kubelet.conf ] || [ -f /etc/kubernetes/bootstrap-kubelet.conf ]; }; do sleep 0.2; done
KUBELET_KUBEADM_ARGS=
. /var/lib/kubelet/kubeadm-flags.env
exec kubelet ` + strings.Join(args, " ") + ` $KUBELET_KUBEADM_ARGS
`
}

// startKubeadmKubelet starts the kubelet supervisor of a kubeadm host.
func (n *Node) startKubeadmKubelet() error {
	spec := n.inNodeSpec("kubelet", "/bin/sh", "-c", n.cfg.kubeletSupervised())
	r, err := proc.StartRestarting(spec, proc.Backoff{Initial: KubeletRestartDelay, Max: KubeletRestartDelay, Reset: time.Minute},
		proc.RestartOptions{})
	if err != nil {
		return fmt.Errorf("node %s: kubelet supervisor: %w", n.cfg.Name, err)
	}
	n.supervised = r
	return nil
}

// kubeletPatch is the kubeadm patch (strategic merge on KubeletConfiguration) with what the lab's
// kubelets need besides kubeadm's defaults: the cgroupfs driver under the node's cgroup root (no
// systemd), swap allowed, eviction and image garbage collection that never fire on a shared disk,
// volume plugins under the hidden /var/lib, and containerd's socket.
func (c *Config) kubeletPatch() ([]byte, error) {
	endpoint := "unix://" + c.socket()
	p := map[string]any{
		"apiVersion":                  "kubelet.config.k8s.io/v1beta1",
		"kind":                        "KubeletConfiguration",
		"cgroupDriver":                "cgroupfs",
		"cgroupRoot":                  c.CgroupRoot,
		"cgroupsPerQOS":               true,
		"enforceNodeAllocatable":      []string{"pods"},
		"failSwapOn":                  false,
		"containerRuntimeEndpoint":    endpoint,
		"imageServiceEndpoint":        endpoint,
		"volumePluginDir":             "/var/lib/kubelet-plugins/volume/exec",
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"evictionHard": map[string]string{
			"memory.available": "1Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%", "imagefs.available": "1%",
		},
		"resolvConf": "/etc/resolv.conf",
	}
	if v, err := version.ParseGeneric(c.Kubeadm.Version); err == nil && v.AtLeast(version.MajorMinor(1, 31)) {
		p["failCgroupV1"] = false
	}
	data, err := yaml.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("node %s: kubelet patch: %w", c.Name, err)
	}
	return data, nil
}

// CRISocket is the node's containerd endpoint: nodeRegistration.criSocket of a kubeadm host.
func (n *Node) CRISocket() string { return "unix://" + n.cfg.socket() }

// KubeadmCRISocket is a kubeadm host's containerd socket inside the node, kubeadm's default.
const KubeadmCRISocket = "/run/containerd/containerd.sock"

// EtcPath is file p of the node's /etc as the machine sees it (on a kubeadm host, where /etc is
// the node's own: /etc/kubernetes/admin.conf is EtcPath("kubernetes/admin.conf")).
func (n *Node) EtcPath(p string) string { return filepath.Join(n.cfg.hostDir("/etc"), p) }
