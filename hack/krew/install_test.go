// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// kubectlVersion is the lab's default Kubernetes version (pkg/lab.DefaultVersion), whose kubectl
// `make lab-binaries` builds.
const kubectlVersion = "v1.36.3"

// TestInstallFromRelease installs the plugin as a user would: hack/release builds this host's
// archive, hack/krew renders its manifest, a krew built from its Go module installs it
// (kubectl krew install --manifest --archive) and a real kubectl runs `kubectl credwatch`; once
// the caveats' cp line puts kubectl_complete-credwatch on PATH, kubectl completes
// `kubectl credwatch <TAB>` through it (kubectl __complete credwatch "").
//
// Nothing leaves the machine: with --manifest krew neither clones nor updates its index, the
// upgrade check is off (KREW_NO_UPGRADE_CHECK), HTTP(S) goes to a closed loopback proxy, and
// the git on PATH is a stub that fails the test if krew ever runs it.
func TestInstallFromRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds credwatch and krew (-short)")
	}
	kubectl := labKubectl(t)
	host := target{runtime.GOOS, runtime.GOARCH}
	if !contains(targets(), host) {
		t.Skipf("no release archive for this host, %s", host)
	}
	version := "v" + chartAppVersion(t)
	tmp := t.TempDir()
	dist, bin, root := filepath.Join(tmp, "dist"), filepath.Join(tmp, "bin"), filepath.Join(tmp, "krew")
	home, tmpdir := filepath.Join(tmp, "home"), filepath.Join(tmp, "tmp")
	for _, d := range []string{bin, home, tmpdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	rel := exec.Command("go", "run", "./hack/release", "-platforms", host.String(), "-version", version, "-out", dist)
	rel.Dir = "../.."
	if out, err := rel.CombinedOutput(); err != nil {
		t.Fatalf("hack/release: %v\n%s", err, out)
	}
	if err := os.Symlink(tool(t, "krew"), filepath.Join(bin, "kubectl-krew")); err != nil {
		t.Fatal(err)
	}
	gitCalls := filepath.Join(tmp, "git-calls")
	stub := "#!/bin/sh\necho \"$@\" >> '" + gitCalls + "'\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(tmp, "credwatch.yaml")
	if err := run(version, filepath.Join(dist, "checksums.txt"), "", manifest); err != nil {
		t.Fatal(err)
	}

	env := []string{
		"KREW_ROOT=" + root, "KREW_NO_UPGRADE_CHECK=1", "HOME=" + home, "TMPDIR=" + tmpdir,
		"PATH=" + bin + ":" + filepath.Join(root, "bin") + ":/usr/bin:/bin",
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=",
		"KUBECONFIG=" + filepath.Join(home, "no-kubeconfig"),
	}
	kube := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(kubectl, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	archive := filepath.Join(dist, host.Archive(version))
	kube("krew", "install", "--manifest="+manifest, "--archive="+archive)

	want := "credwatch " + version + " (commit " + gitHead(t) + ", "
	if got := kube("credwatch", "version"); !strings.HasPrefix(got, want) {
		t.Errorf("kubectl credwatch version printed %q, want %q…", got, want)
	}
	if got := kube("credwatch", "--help"); !strings.Contains(got, "kubectl credwatch") {
		t.Errorf("kubectl credwatch --help does not name itself kubectl credwatch:\n%s", got)
	}
	if got := kube("plugin", "list"); !strings.Contains(got, filepath.Join(root, "bin", "kubectl-credwatch")) {
		t.Errorf("kubectl plugin list does not list krew's kubectl-credwatch:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(root, "receipts", "credwatch.yaml")); err != nil {
		t.Errorf("krew wrote no receipt: %v", err)
	}

	// kubectl credwatch <TAB>: kubectl runs kubectl_complete-credwatch from PATH, which krew
	// does not link; the caveats' own cp line puts it there.
	if got := kube("__complete", "credwatch", ""); strings.Contains(got, "preflight") {
		t.Errorf("kubectl completes credwatch's subcommands before the shim is on PATH:\n%s", got)
	}
	cp := caveatCommand(t, manifest)
	sh := exec.Command("sh", "-c", cp)
	sh.Env = env
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the caveats' %q: %v\n%s", cp, err, out)
	}
	subcommands := kube("__complete", "credwatch", "")
	for _, want := range []string{"check\t", "preflight\t", "logs\t", "token\t", "watch\t", ":4\n"} {
		if !strings.Contains(subcommands, want) {
			t.Errorf("kubectl __complete credwatch \"\" has no %q:\n%s", want, subcommands)
		}
	}
	if got := kube("__complete", "credwatch", "check", "-o", ""); !strings.Contains("\n"+got, "\njson\n") {
		t.Errorf("kubectl __complete credwatch check -o \"\" offers no json:\n%s", got)
	}
	if calls, err := os.ReadFile(gitCalls); err == nil {
		t.Errorf("krew ran git (it must not touch the network):\n%s", calls)
	}
}

// caveatCommand is the one line of the manifest's caveats that copies the completion shim.
func caveatCommand(t *testing.T, manifest string) string {
	t.Helper()
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Spec struct {
			Caveats string `json:"caveats"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(m.Spec.Caveats, "\n") {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "cp ") && strings.Contains(line, shim) {
			return line
		}
	}
	t.Fatalf("the caveats name no cp of %s:\n%s", shim, m.Spec.Caveats)
	return ""
}

// labKubectl is the lab's kubectl: in $CREDWATCH_LAB_BIN, <repo>/.lab-cache/bin or
// ~/.cache/credwatch/lab-bin.
func labKubectl(t *testing.T) string {
	t.Helper()
	var dirs []string
	if d := os.Getenv("CREDWATCH_LAB_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	dirs = append(dirs, "../../.lab-cache/bin")
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, ".cache", "credwatch", "lab-bin"))
	}
	for _, d := range dirs {
		p, err := filepath.Abs(filepath.Join(d, kubectlVersion, "kubectl"))
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p
		}
	}
	t.Skipf("no kubectl %s in %v: run `make lab-binaries`", kubectlVersion, dirs)
	return ""
}

func chartAppVersion(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../deploy/helm/credwatch/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil || c.AppVersion == "" {
		t.Fatalf("the chart's appVersion: %q, %v", c.AppVersion, err)
	}
	return strings.TrimPrefix(c.AppVersion, "v")
}

func gitHead(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	return strings.TrimSpace(string(out))
}
