// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	clipkg "github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/workload"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationCLICAPISupervisorKilledMidRoll brings the Cluster API lab up through the CLI
// (v1.14.2, v1beta2, on a v1.36.3 management lab), starts a roll, SIGKILLs the lab's supervisor once the new machine's host runs, and then
// requires `lab down` to leave nothing: no process naming the lab, no host cgroup, no network
// namespace, no mount under the lab directory. It needs make capi-binaries (make test-capi).
func TestIntegrationCLICAPISupervisorKilledMidRoll(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	labtest.CAPIAll(t)
	needCAPIBinaries(t, capi.V1142)
	bin := buildCLI(t)
	dir := filepath.Join(t.TempDir(), "lab")
	t.Cleanup(func() { _, _ = lab.KillLeftovers(dir) })
	if _, code := run(t, bin, "lab", "capi", "up", "--dir", dir, "--capi", capi.V1142, "--lb-check", "tcp"); code != 0 {
		t.Fatalf("lab capi up: exit %d", code)
	}
	out, _ := run(t, bin, "lab", "status", "--dir", dir, "-o", "json")
	var st struct {
		PID int        `json:"supervisorPID"`
		Lab lab.Status `json:"lab"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.PID <= 1 || st.Lab.NetworkPrefix == "" {
		t.Fatalf("status: %v %q", err, out)
	}
	checkCAPICluster(t, bin, dir)
	hosts := filepath.Join(dir, lab.CAPIHostsDir)
	roots := startRoll(t, dir, hosts)
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t.Logf("supervisor %d killed mid-roll, %d hosts running", st.PID, len(roots))
	if _, code := run(t, bin, "lab", "down", "--dir", dir); code != 0 {
		t.Errorf("lab down with a dead supervisor mid-roll: exit %d", code)
	}
	waitGone(t, dir)
	for _, root := range roots {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", root)); err == nil {
			t.Errorf("host cgroup %s left", root)
		}
	}
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil && strings.Contains(string(out), st.Lab.NetworkPrefix+"-") {
		t.Errorf("network namespaces of %s left:\n%s", st.Lab.NetworkPrefix, out)
	}
	if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil && strings.Contains(string(data), dir) {
		t.Errorf("mounts under %s left", dir)
	}
}

// needCAPIBinaries skips t unless make capi-binaries built version and its Kubernetes line.
func needCAPIBinaries(t *testing.T, version string) {
	t.Helper()
	binDir := lab.DefaultBinDir()
	if _, err := capi.Find(binDir, version); err != nil {
		t.Skipf("%v", err)
	}
	if _, err := kubeadm.FindBinaries(binDir, capi.LineOf(version).Kubernetes); err != nil {
		t.Skipf("%v", err)
	}
}

// startRoll sets the KubeadmControlPlane's rolloutAfter through the management cluster and
// waits until the new machine's host has started, returning every host's recorded cgroup root.
func startRoll(t *testing.T, dir, hosts string) []string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	patch := fmt.Sprintf(`{"spec":{"rollout":{"after":%q}}}`, time.Now().UTC().Format(time.RFC3339))
	kcp := capilab.GVR(workload.ControlPlaneAPIVersion, "KubeadmControlPlane")
	kcp.Version = workload.V1Beta2
	if _, err := dyn.Resource(kcp).Namespace("default").Patch(ctx, workload.Config{Name: "w1"}.ControlPlaneName(),
		types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("set rolloutAfter: %v", err)
	}
	for {
		roots := hostRoots(hosts)
		if len(roots) >= 2 {
			return roots
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no second host within 3 minutes of the roll's start (host cgroups: %v)", roots)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// checkCAPICluster runs check on the management cluster with --capi-cluster: it reaches the
// workload cluster through w1-kubeconfig and names the Machine its one member runs on, and the
// Cluster API version from clusterctl's inventory.
func checkCAPICluster(t *testing.T, bin, dir string) {
	t.Helper()
	out, code := run(t, bin, "check", "--kubeconfig", filepath.Join(dir, "admin.kubeconfig"), "--capi-cluster", "w1", "-n", "default",
		"--create-probe-sa", "--no-cloud", "-o", "json")
	var r check.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil || code == clipkg.ExitUsage || code == clipkg.ExitInternal {
		t.Fatalf("check --capi-cluster: exit %d, %v\n%s", code, err, out)
	}
	if r.ClusterAPI == nil || r.ClusterAPI.Version != capi.V1142 || len(r.ClusterAPI.Machines) != 1 {
		t.Fatalf("check --capi-cluster: clusterAPI %+v, want v1.14.2's one machine", r.ClusterAPI)
	}
	if cp := r.ClusterAPI.ControlPlane; cp == nil || cp.Name != "default/w1-control-plane" || cp.Replicas != 1 || cp.UpToDate != 1 {
		t.Errorf("check --capi-cluster: the KubeadmControlPlane read at v1beta2 is %+v, want 1 of 1 up to date", cp)
	}
	m := r.ClusterAPI.Machines[0]
	if m.Member == "" || len(r.Members) != 1 || r.Members[0].Machine != m.Name {
		t.Errorf("check --capi-cluster: machine %+v, members %+v: want the member related to it", m, r.Members)
	}
	t.Logf("check --capi-cluster: exit %d, machine %s (%s) runs member %s", code, m.Name, m.Phase, m.Member)
	// watch --capi-cluster reads the same: its member-joined event names the Machine.
	wout, wcode := run(t, bin, "watch", "--kubeconfig", filepath.Join(dir, "admin.kubeconfig"), "--capi-cluster", "w1", "-n", "default",
		"--create-probe-sa", "--interval", "2s", "--duration", "7s", "-o", "json")
	if wcode == clipkg.ExitUsage || wcode == clipkg.ExitInternal || !strings.Contains(wout, "on Machine "+m.Name) {
		t.Errorf("watch --capi-cluster: exit %d, want a member-joined event on Machine %s:\n%s", wcode, m.Name, wout)
	}
	if _, code := run(t, bin, "check", "--kubeconfig", filepath.Join(dir, "admin.kubeconfig"), "--capi-cluster", "nope", "-n", "default"); code != clipkg.ExitUsage {
		t.Errorf("check --capi-cluster nope -n default: exit %d, want %d", code, clipkg.ExitUsage)
	}
}
