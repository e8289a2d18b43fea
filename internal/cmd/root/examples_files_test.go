// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package root

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/cloud/cloudtest"
)

// fileFrom makes one file an example names (or a link to a directory), at dst.
type fileFrom func(dst string) error

// offlineFiles is the one table of the files the offline examples name, by the name they give
// (an absolute one is made under the examples' directory, where such arguments point), each made
// from the repository's test data (root is the repository), or for sim.
func offlineFiles(root string, sim *cloudtest.VCSim) map[string]fileFrom {
	repo := func(p string) fileFrom { return copied(filepath.Join(root, p)) }
	runbook := shownIn(filepath.Join(root, "docs/runbook.md"))
	const keyDrift = "pkg/logs/testdata/lab/v1.36.3/key-drift/"
	const pair = "pkg/preflight/testdata/kcp-rollout-after/"
	return map[string]fileFrom{
		// keys and tokens
		"/etc/kubernetes/pki/sa.pub": repo("pkg/keys/testdata/kubernetes/rsa.pub"),
		"sa.pub":                     repo("pkg/keys/testdata/kubernetes/rsa.pub"),
		"sa.key":                     repo("pkg/keys/testdata/kubernetes/rsa.key"),
		"drift.key":                  repo("pkg/keys/testdata/gen/rsa-drift.key"),
		"token.jwt":                  repo("internal/cmd/token/testdata/pod.jwt"),
		"/var/run/secrets/kubernetes.io/serviceaccount/token": repo("internal/cmd/token/testdata/pod.jwt"),
		// logs: files, a support bundle, a node's pod logs, a kubectl dump, stern's output
		"apiserver-1.log.gz":  gzipped(filepath.Join(root, keyDrift, "apiserver-1.log")),
		"apiserver-2.log.gz":  gzipped(filepath.Join(root, keyDrift, "apiserver-2.log")),
		"kubelet-journal.txt": repo("pkg/logs/testdata/mixed.log"),
		// one audit log per member, for logs --trace-credential
		"cp-1/audit.log":                                repo("pkg/logs/audit/testdata/members/cp-1/audit.log"),
		"cp-2/audit.log":                                repo("pkg/logs/audit/testdata/members/cp-2/audit.log"),
		"cp-3/audit.log":                                repo("pkg/logs/audit/testdata/members/cp-3/audit.log"),
		"bundle/cp-1/kubelet.log":                       repo("pkg/logs/testdata/mixed.log"),
		"bundle/cp-1/kube-apiserver.log":                repo(keyDrift + "apiserver-1.log"),
		"bundle/old/cp-1/kube-apiserver.log":            repo(keyDrift + "apiserver-2.log"),
		"dump/kube-system/kube-apiserver-cp-1/logs.txt": repo(keyDrift + "apiserver-1.log"),
		"dump/kube-system/kube-apiserver-cp-2/logs.txt": repo(keyDrift + "apiserver-2.log"),
		"/var/log/pods/kube-system_kube-apiserver-cp-1_5b2f0c1e/kube-apiserver/0.log": repo("pkg/logs/testdata/mixed.log"),
		"stern.log": repo("pkg/logs/testdata/seed-000.log"),
		// the runbook's examples: the repository's paths, and the files it shows with `cat`
		"pkg/logs/testdata":                       linked(filepath.Join(root, "pkg/logs/testdata")),
		"hack/runbook/testdata":                   linked(filepath.Join(root, "hack/runbook/testdata")),
		"pkg/preflight/testdata/static-signer-on": linked(filepath.Join(root, "pkg/preflight/testdata/static-signer-on")),
		"vault.log":                               runbook,
		"istiod.log":                              runbook,
		"irsa.log":                                runbook,
		"kube-controller-manager.log":             runbook,
		"consumers.log":                           runbook,
		"secrets.log":                             runbook,
		// preflight: the rendered manifests of a roll, and the live side's
		"current.yaml":          repo(pair + "current.yaml"),
		"planned.yaml":          repo(pair + "planned.yaml"),
		"live/current.yaml":     repo(pair + "current.yaml"),
		"rendered/planned.yaml": repo(pair + "planned.yaml"),
		// cloud: configs, and kubespray's in-tree cloud_config for vcsim
		"vsphere.conf":          repo("pkg/cloud/testdata/configs/csi-vsphere.conf"),
		"openstack/cloud.conf":  repo("pkg/cloud/testdata/configs/openstack-cloud.conf"),
		"openstack/clouds.yaml": repo("pkg/cloud/testdata/configs/clouds.yaml"),
		"cloud_config":          vsphereConfig(sim),
	}
}

// makeFiles makes files in dir; a name that is absolute is made below dir.
func makeFiles(t *testing.T, dir string, files map[string]fileFrom) {
	t.Helper()
	for name, from := range files {
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := from(dst); err != nil {
			t.Fatalf("example file %s: %v", name, err)
		}
	}
}

// copied is the file at src.
func copied(src string) fileFrom {
	return func(dst string) error {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o600)
	}
}

// text is s.
func text(s string) fileFrom {
	return func(dst string) error { return os.WriteFile(dst, []byte(s), 0o600) }
}

// gzipped is the file at src, gzip-compressed.
func gzipped(src string) fileFrom {
	return func(dst string) error {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		f, err := os.Create(dst)
		if err != nil {
			return err
		}
		zw := gzip.NewWriter(f)
		_, err = zw.Write(data)
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
}

// linked is a symbolic link to src: the runbook's examples name the repository's own files.
func linked(src string) fileFrom {
	return func(dst string) error { return os.Symlink(src, dst) }
}

// shownIn is the file as the Markdown doc shows it: the lines after `$ cat NAME` in a code
// block, NAME being the file's base name.
func shownIn(doc string) fileFrom {
	return func(dst string) error {
		f, err := os.Open(doc)
		if err != nil {
			return err
		}
		defer f.Close()
		var lines []string
		in := false
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			switch l := sc.Text(); {
			case l == "$ cat "+filepath.Base(dst):
				in = true
			case in && strings.HasPrefix(l, "```"):
				return os.WriteFile(dst, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
			case in:
				lines = append(lines, l)
			}
		}
		return fmt.Errorf("%s shows no `$ cat %s` block", doc, filepath.Base(dst))
	}
}

// The vSphere account of the examples' cloud configs, which their vcsim accepts.
const vsphereUser, vspherePassword = "k8s-vcp@vsphere.local", "Old-pass#1"

// startVCSim starts the vCenter the examples' cloud configs name.
func startVCSim(t *testing.T) *cloudtest.VCSim {
	t.Helper()
	return cloudtest.StartVCSim(t, vsphereUser, vspherePassword)
}

// vsphereConfig is kubespray's in-tree cloud_config for sim, as the runbook's example has it.
func vsphereConfig(sim *cloudtest.VCSim) fileFrom {
	return text(fmt.Sprintf("[Global]\nuser = %q\npassword = %q\nport = %s\ninsecure-flag = 1\n\n[VirtualCenter %q]\ndatacenters = DC0\n",
		vsphereUser, vspherePassword, sim.Port, sim.Host))
}
