// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

func kubeadmConfig() Config {
	c := testConfig()
	c.APIServer, c.CAPEM, c.Issue, c.KubeProxy = "", nil, nil, ""
	c.Kubeadm = &Kubeadm{Kubeadm: "/bin/kubeadm", Crictl: "/bin/crictl"}
	return c
}

func TestKubeadmConfigComplete(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		errSub string
	}{
		{"ok without API server, CA or kube-proxy", func(*Config) {}, ""},
		{"no crictl", func(c *Config) { c.Kubeadm.Crictl = "" }, "kubeadm and crictl"},
		{"no kubelet", func(c *Config) { c.Kubelet = "" }, "kubeadm and crictl"},
		{"dir under /etc", func(c *Config) { c.Dir = "/etc/lab/kadm-1" }, "is under /etc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := kubeadmConfig()
			tc.mutate(&c)
			err := c.complete()
			if tc.errSub == "" && err != nil || tc.errSub != "" && (err == nil || !strings.Contains(err.Error(), tc.errSub)) {
				t.Fatalf("complete() = %v, want error containing %q", err, tc.errSub)
			}
		})
	}
}

// The patch kubeadm merges into its KubeletConfiguration must be one the kubelet's own type reads.
func TestKubeletPatchDecodesStrictly(t *testing.T) {
	c := kubeadmConfig()
	if err := c.complete(); err != nil {
		t.Fatal(err)
	}
	data, err := c.kubeletPatch()
	if err != nil {
		t.Fatal(err)
	}
	var kc kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(data, &kc); err != nil {
		t.Fatalf("patch does not decode strictly: %v\n%s", err, data)
	}
	if kc.CgroupDriver != "cgroupfs" || kc.CgroupRoot != c.CgroupRoot || kc.ContainerRuntimeEndpoint != "unix://"+c.socket() {
		t.Errorf("patch: driver %q root %q endpoint %q", kc.CgroupDriver, kc.CgroupRoot, kc.ContainerRuntimeEndpoint)
	}
	if !strings.HasPrefix(kc.VolumePluginDir, "/var/lib/") {
		t.Errorf("volumePluginDir %q is not under the hidden /var/lib", kc.VolumePluginDir)
	}
}

// The supervisor's script and the systemctl shim are shell: both must parse, and the script must
// run the kubelet with kubeadm's drop-in flags.
func TestKubeadmScripts(t *testing.T) {
	c := kubeadmConfig()
	c.KubeletArgs = []string{"--provider-id=lab://kadm-1"}
	script := c.kubeletSupervised()
	for _, want := range []string{"--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf", "--kubeconfig=/etc/kubernetes/kubelet.conf",
		"--config=/var/lib/kubelet/config.yaml", "$KUBELET_KUBEADM_ARGS", "--provider-id=lab://kadm-1", ". /var/lib/kubelet/kubeadm-flags.env"} {
		if !strings.Contains(script, want) {
			t.Errorf("kubelet script lacks %q:\n%s", want, script)
		}
	}
	for name, s := range map[string]string{"kubelet script": script, "systemctl shim": systemctlShim} {
		if out, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %v: %s", name, err, out)
		}
	}
}

func TestCleanupDirRecord(t *testing.T) {
	dir := t.TempDir()
	if err := CleanupDir(dir); err != nil {
		t.Errorf("a directory without a node: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, cgroupRootFile), []byte("/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CleanupDir(dir); err == nil || !strings.Contains(err.Error(), "not one a node uses") {
		t.Errorf("a record of / : %v", err)
	}
}
