// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
)

// TestBinariesMatchBuildScript keeps lab.Binaries equal to what hack/labbin/build.sh builds, so
// TestIntegrationLabBinaries checks every one of them.
func TestBinariesMatchBuildScript(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "hack", "labbin", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// build <module-dir> <version dir> <package> <name> ["$source_hash"]
	re := regexp.MustCompile(`(?m)^(?:\w+=\S+ )?build \S+ (\S+) \S+ (\S+)(?: "\$\w+")?$`)
	var built []string
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		built = append(built, m[1]+"/"+m[2])
	}
	var want []string
	for _, b := range lab.Binaries() {
		want = append(want, binDir(b)+"/"+b.Name)
	}
	slices.Sort(built)
	slices.Sort(want)
	if !slices.Equal(built, want) {
		t.Errorf("hack/labbin/build.sh builds %v; lab.Binaries() lists %v", built, want)
	}
}

// TestIntegrationLabBinaries fails when anything `make lab-binaries` builds is missing, and checks
// each binary reports the version its directory names.
func TestIntegrationLabBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs the lab binaries (skipped under -short)")
	}
	d := lab.DefaultBinDir()
	if err := lab.CheckBinaries(d, lab.Binaries()); err != nil {
		t.Fatal(err)
	}
	for _, b := range lab.Binaries() {
		p, _ := lab.Binary(d, b.Version, b.Name)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		args := []string{"--version"}
		if b.Name == "kubectl" {
			args = []string{"version", "--client"}
		}
		out, err := exec.CommandContext(ctx, p, args...).CombinedOutput()
		cancel()
		want := strings.TrimPrefix(binDir(b), "etcd-v")
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("%s --version: %v: %q, want %s in it", p, err, out, want)
		}
	}
}

// binDir is the directory of b under the lab's bin directory.
func binDir(b lab.BinaryRef) string {
	if b.Name == "etcd" {
		return "etcd-" + lab.EtcdVersion
	}
	return b.Version
}

func TestNeeds(t *testing.T) {
	tests := []struct {
		o    lab.Options
		want []lab.BinaryRef
	}{
		{lab.Options{}, []lab.BinaryRef{{"", "etcd"}, {lab.DefaultVersion, "kube-apiserver"}}},
		{lab.Options{Version: lab.OldVersion}, []lab.BinaryRef{{"", "etcd"}, {lab.OldVersion, "kube-apiserver"}}},
		{lab.Options{WithControllerManager: true}, []lab.BinaryRef{{"", "etcd"}, {lab.DefaultVersion, "kube-apiserver"}, {lab.DefaultVersion, "kube-controller-manager"}}},
		{lab.Options{Nodes: 1}, []lab.BinaryRef{{"", "etcd"}, {lab.DefaultVersion, "kube-apiserver"}, {lab.DefaultVersion, "kube-controller-manager"},
			{lab.DefaultVersion, "kube-scheduler"}, {lab.DefaultVersion, "kubelet"}, {lab.DefaultVersion, "kube-proxy"}}},
		{lab.Options{ExternalSigner: true}, []lab.BinaryRef{{"", "etcd"}, {lab.DefaultVersion, "kube-apiserver"}, {lab.DefaultVersion, lab.ExternalSigner}}},
		{lab.Options{Nodes: 1, CredentialProvider: &lab.CredentialProviderOptions{}}, []lab.BinaryRef{{"", "etcd"}, {lab.DefaultVersion, "kube-apiserver"}, {lab.DefaultVersion, "kube-controller-manager"},
			{lab.DefaultVersion, "kube-scheduler"}, {lab.DefaultVersion, "kubelet"}, {lab.DefaultVersion, "kube-proxy"}, {lab.DefaultVersion, lab.CredentialProviderBinary}}},
	}
	for _, tt := range tests {
		if got := tt.o.Needs(); !slices.Equal(got, tt.want) {
			t.Errorf("Needs(%+v) = %v, want %v", tt.o, got, tt.want)
		}
	}
	err := lab.CheckBinaries(t.TempDir(), lab.Options{WithControllerManager: true}.Needs())
	if err == nil || strings.Count(err.Error(), "not found") != 3 {
		t.Errorf("CheckBinaries on an empty directory = %v, want all three named", err)
	}
}
