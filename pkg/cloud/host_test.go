// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestProcessOf(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string // kind/node/provider/config; "" when not a consumer
	}{
		{[]string{"/usr/local/bin/kubelet", "--hostname-override=node-1", "--cloud-provider=vsphere", "--cloud-config=/etc/kubernetes/cloud_config"},
			"kubelet/node-1/vsphere//etc/kubernetes/cloud_config"},
		{[]string{"kube-controller-manager", "--cloud-provider", "vsphere", "--cloud-config", "/etc/kubernetes/cloud_config", "--hostname-override=x"},
			"kube-controller-manager//vsphere//etc/kubernetes/cloud_config"},
		{[]string{"/bin/vsphere-cloud-controller-manager", "--cloud-config=/etc/cloud/vsphere.conf"}, "cloud-controller-manager////etc/cloud/vsphere.conf"},
		{[]string{"kube-apiserver", "--cloud-config=/a"}, "kube-apiserver////a"},
		{[]string{"kubelet", "--kubeconfig=/etc/kubernetes/kubelet.conf"}, ""},
		{[]string{"vi", "--cloud-config=/etc/kubernetes/cloud_config"}, ""},
	} {
		p, ok := processOf(tc.argv)
		got := ""
		if ok {
			got = p.Kind + "/" + p.Node + "/" + p.CloudProvider + "/" + p.CloudConfig
		}
		if got != tc.want {
			t.Errorf("processOf(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

// TestHostProcesses: a real process on this machine whose argv[0] is "kubelet" (a shell that
// sleeps, renamed; the flags are its positional arguments, which it ignores) with --cloud-config
// and --hostname-override is found in /proc, with its pid, node, start time and file; the test
// binary itself (no --cloud-config) is not.
func TestHostProcesses(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("no sh: %v", err)
	}
	file := filepath.Join(t.TempDir(), "cloud_config")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	cmd := &exec.Cmd{Path: sh, Args: []string{"kubelet", "-c", "sleep 60; exit 0", "kubelet",
		"--hostname-override=node-x", "--cloud-provider=vsphere", "--cloud-config=" + file}, SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }) // the shell and its sleep
	procs, err := HostProcesses("/proc")()
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	var found *Process
	for i, p := range procs {
		if p.PID == os.Getpid() {
			t.Errorf("the test binary was taken for a %s", p.Kind)
		}
		if p.PID == cmd.Process.Pid {
			found = &procs[i]
		}
	}
	if found == nil {
		t.Fatalf("pid %d (kubelet --cloud-config=%s) not found among %d processes", cmd.Process.Pid, file, len(procs))
	}
	if found.Kind != Kubelet || found.Node != "node-x" || found.CloudProvider != "vsphere" || !found.reads(file) {
		t.Errorf("found %+v, want a kubelet of node-x reading %s", *found, file)
	}
	// /proc's start time is whole-second boot time plus clock ticks: up to a second early.
	if found.Started.Before(before.Add(-procStartSlop-time.Second)) || found.Started.After(time.Now()) {
		t.Errorf("started %s, want between %s and now", found.Started, before)
	}
}

// TestHostConsumers: a kubelet that the cluster's Starting Events show restarting in a loop, and
// that is not running when /proc is first read, is waited for; once seen reading the --config
// file it is a looping consumer and the rejected credential's finding names it. A kubelet that
// runs steadily is an ordinary consumer; a looping kubelet never seen is a note.
func TestHostConsumers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cloud_config.node-2")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var events []corev1.Event
	for i, node := range []string{"node-2", "node-2", "node-2", "node-3", "node-3", "node-3"} {
		events = append(events, corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: node + "." + string(rune('a'+i)), Namespace: "default"},
			Reason: "Starting", InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node}, Source: corev1.EventSource{Component: "kubelet"},
			Message: "Starting kubelet.", LastTimestamp: metav1.NewTime(now.Add(-time.Duration(i) * 10 * time.Second)), Count: 1})
	}
	cs := fake.NewClientset(&corev1.EventList{Items: events})
	steady := Process{PID: 10, Kind: Kubelet, Node: "node-1", Started: now.Add(-time.Hour), CloudConfig: filepath.Join(dir, "cloud_config.node-1")}
	looper := Process{PID: 11, Kind: Kubelet, Node: "node-2", Started: now, CloudConfig: file}
	other := Process{PID: 12, Kind: Kubelet, Node: "node-9", Started: now, CloudConfig: file}
	reads := 0
	reader := func() ([]Process, error) {
		reads++
		if reads < 3 {
			return []Process{steady}, nil // node-2's kubelet is between two starts
		}
		return []Process{steady, looper, other}, nil
	}
	src := Source{Kind: SourceFile, Path: file}
	cfg, err := Parse([]byte("[Global]\nuser = u\npassword = p\n[VirtualCenter \"vc1\"]\n"), src)
	if err != nil {
		t.Fatal(err)
	}
	var progress []string
	inv := Discover(context.Background(), cs, DiscoverOptions{Local: []*Config{cfg}, Processes: reader, LoopWait: time.Second,
		Progress: func(f string, a ...any) { progress = append(progress, f) }})
	if len(inv.Items) != 1 {
		t.Fatalf("items: %+v", inv.Items)
	}
	it := inv.Items[0]
	if reads < 3 || len(progress) != 1 {
		t.Errorf("read /proc %d times with %d progress lines; want the wait announced once and /proc read until node-2's kubelet ran", reads, len(progress))
	}
	var got []string
	for _, c := range it.Consumers {
		got = append(got, c.Component+"/"+c.Node)
		if c.Node == "node-2" && (!c.Looping || c.Restarts != 3 || c.PID != 11 || !strings.Contains(c.How, "started 3 times")) {
			t.Errorf("node-2's kubelet: %+v, want looping with 3 starts", c)
		}
		if c.Node == "node-9" && c.Looping {
			t.Errorf("node-9's kubelet is not looping: %+v", c)
		}
	}
	if strings.Join(got, ",") != "kubelet/node-2,kubelet/node-9" {
		t.Errorf("consumers %v, want node-2's and node-9's kubelets (node-1's reads another file)", got)
	}
	if len(inv.Notes) != 1 || !strings.Contains(inv.Notes[0], "node node-3 started 3 times") {
		t.Errorf("notes %q, want one about node-3's kubelet, never seen here", inv.Notes)
	}
	it.Test = TestResult{Verdict: Rejected, Fault: "InvalidLogin"}
	it.decideAction()
	fs := itemFindings(&it)
	var loop []string
	for _, f := range fs {
		if f.ID == IDKubeletCrashLoop {
			loop = append(loop, f.Object+": "+f.Message)
		}
	}
	if len(loop) != 1 || !strings.HasPrefix(loop[0], "node/node-2: Kubelet (pid 11) of node node-2 with --cloud-config") || !strings.Contains(loop[0], "vCenter rejects u@vc1 (InvalidLogin)") {
		t.Errorf("kubelet-crashloop findings %q, want one for node-2 naming the rejected credential", loop)
	}
}
