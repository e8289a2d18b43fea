// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
	"github.com/credwatch/credwatch/pkg/lab/cloudinit"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationReconcile runs the reconcilers against a real v1.30.14 apiserver with Cluster
// API v1.8's CRDs and the provider's, but no Cluster API manager: the test plays Cluster API's
// part by hand (a Cluster, its infrastructureReady, a Machine owning a LabMachine, its bootstrap
// Secret, the Machine's deletion) and a recording fake plays the hosts. Once per deregistration
// policy, it shows the LabCluster getting its balancer's endpoint and ready, the LabMachine
// getting providerID, addresses and ready, the host joining the balancer once it runs, out of
// rotation until its health check passes (kubeadm init needs the endpoint), leaving it when the
// Machine is deleted under on-drain but only when the LabMachine is under on-machine-delete,
// and the host deleted with the LabMachine.
func TestIntegrationReconcile(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: starts a lab (skipped under -short)")
	}
	labtest.CAPIAll(t)
	rel, err := capi.Find(lab.DefaultBinDir(), capi.V181)
	if err != nil {
		t.Skipf("%v", err) // names capi.MakeTarget
	}
	start := time.Now()
	// No Cluster API manager runs, so nothing needs the lab network: loopback members suffice.
	l := labtest.Start(t, lab.Options{Members: 1, Version: lab.OldVersion, Network: lab.NetworkLoopback})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(l.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rel.InstallCRDs(ctx, dyn, time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if err := infra.InstallCRDs(ctx, dyn); err != nil {
		t.Fatal(err)
	}
	t.Logf("lab up and CRDs established in %s", time.Since(start).Round(time.Millisecond))

	hosts := &fakeHosts{root: t.TempDir(), hosts: map[string]*fakeHost{}}
	c, err := controller.New(controller.Options{Client: dyn, Hosts: hosts, Namespace: "default",
		Poll: 250 * time.Millisecond, Log: labtest.Log(t)})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	for _, d := range []infra.Deregistration{infra.OnDrain, infra.OnMachineDelete} {
		t.Run(string(d), func(t *testing.T) {
			w := &world{t: t, ctx: ctx, dyn: dyn, c: c, hosts: hosts, name: "w-" + strings.TrimPrefix(string(d), "on-")}
			w.run(d)
		})
	}
	for _, e := range c.Events() {
		t.Log(e)
	}
	t.Logf("whole test in %s", time.Since(start).Round(time.Millisecond))
}

// world is one workload cluster's objects, made by the test as Cluster API would.
type world struct {
	t     *testing.T
	ctx   context.Context
	dyn   dynamic.Interface
	c     *controller.Controller
	hosts *fakeHosts
	name  string // Cluster and LabCluster
}

const ns = "default"

func (w *world) res(gvr schema.GroupVersionResource) dynamic.ResourceInterface {
	return w.dyn.Resource(gvr).Namespace(ns)
}

func (w *world) create(gvr schema.GroupVersionResource, u *unstructured.Unstructured) *unstructured.Unstructured {
	w.t.Helper()
	u.SetNamespace(ns)
	got, err := w.res(gvr).Create(w.ctx, u, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return got
}

func (w *world) get(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	w.t.Helper()
	u, err := w.res(gvr).Get(w.ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatalf("get %s %s: %v", gvr.Resource, name, err)
	}
	return u
}

// eventually polls cond for up to 20 s; cond returns what it saw when false.
func (w *world) eventually(what string, cond func() (bool, string)) {
	w.t.Helper()
	var saw string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var ok bool
		if ok, saw = cond(); ok {
			return
		}
	}
	w.t.Fatalf("%s: not within 20 s (saw %s)", what, saw)
}

func newObj(apiVersion, kind, name string, labels map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec}}
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

const bootstrapDoc = `## template: jinja
#cloud-config
write_files:
- path: /etc/lab/hostname
  content: "{{ ds.meta_data.local_hostname }}"
runcmd:
- echo success > /run/cluster-api/bootstrap-success.complete
`

func (w *world) run(d infra.Deregistration) {
	t := w.t
	infraAPI := infra.Group + "/" + infra.Version
	// The Cluster, not yet infrastructure-ready, and its LabCluster.
	w.create(controller.Clusters, newObj("cluster.x-k8s.io/v1beta1", "Cluster", w.name, nil, map[string]any{
		"infrastructureRef": map[string]any{"apiVersion": infraAPI, "kind": "LabCluster", "name": w.name, "namespace": ns},
	}))
	w.create(infra.LabClusters, newObj(infraAPI, "LabCluster", w.name, nil, map[string]any{
		"loadBalancer": map[string]any{"healthCheck": "tcp", "deregistration": string(d), "intervalSeconds": int64(1), "unhealthyThreshold": int64(1)},
	}))
	w.eventually("LabCluster endpoint and ready", func() (bool, string) {
		lc := w.get(infra.LabClusters, w.name)
		host, _, _ := unstructured.NestedString(lc.Object, "spec", "controlPlaneEndpoint", "host")
		port, _, _ := unstructured.NestedInt64(lc.Object, "spec", "controlPlaneEndpoint", "port")
		ready, _, _ := unstructured.NestedBool(lc.Object, "status", "ready")
		b := w.c.Balancer(ns, w.name)
		ok := b != nil && ready && b.Addr() == fmt.Sprintf("%s:%d", host, port) && slices.Contains(lc.GetFinalizers(), controller.ClusterFinalizer)
		return ok, fmt.Sprintf("endpoint %s:%d, ready %v, finalizers %v", host, port, ready, lc.GetFinalizers())
	})
	b := w.c.Balancer(ns, w.name)
	if !strings.HasPrefix(b.Addr(), "127.0.0.1:") {
		t.Errorf("balancer at %s, want 127.0.0.1 (Options.Address's default)", b.Addr())
	}

	// The Machine (control plane, bootstrap data ready), its Secret and its LabMachine, named
	// as KubeadmControlPlane names them.
	mname := w.name + "-control-plane-abcde"
	secret := newObj("v1", "Secret", mname, nil, nil)
	delete(secret.Object, "spec")
	secret.Object["type"] = "cluster.x-k8s.io/secret"
	secret.Object["data"] = map[string]any{
		"value":  base64.StdEncoding.EncodeToString([]byte(bootstrapDoc)),
		"format": base64.StdEncoding.EncodeToString([]byte("cloud-config")),
	}
	w.create(controller.Secrets, secret)
	labels := map[string]string{controller.ClusterNameLabel: w.name, controller.ControlPlaneLabel: ""}
	machine := w.create(controller.Machines, newObj("cluster.x-k8s.io/v1beta1", "Machine", mname, labels, map[string]any{
		"clusterName":       w.name,
		"bootstrap":         map[string]any{"dataSecretName": mname},
		"infrastructureRef": map[string]any{"apiVersion": infraAPI, "kind": "LabMachine", "name": mname, "namespace": ns},
	}))
	lm := newObj(infraAPI, "LabMachine", mname, labels, map[string]any{})
	lm.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Machine", Name: mname, UID: machine.GetUID()}})
	w.create(infra.LabMachines, lm)
	w.eventually("LabMachine waits for the Cluster", func() (bool, string) {
		return w.step(mname, infra.WaitCluster), fmt.Sprint(w.steps(mname))
	})
	if n := w.hosts.count("create " + mname); n != 0 {
		t.Fatalf("host created before the Cluster's infrastructure was ready")
	}
	cl := w.get(controller.Clusters, w.name)
	if err := unstructured.SetNestedField(cl.Object, true, "status", "infrastructureReady"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.res(controller.Clusters).UpdateStatus(w.ctx, cl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	w.eventually("LabMachine providerID, addresses, ready", func() (bool, string) {
		got := w.get(infra.LabMachines, mname)
		id, _, _ := unstructured.NestedString(got.Object, "spec", "providerID")
		ready, _, _ := unstructured.NestedBool(got.Object, "status", "ready")
		addrs, _, _ := unstructured.NestedSlice(got.Object, "status", "addresses")
		s := fmt.Sprintf("providerID %q, ready %v, addresses %v, finalizers %v", id, ready, addrs, got.GetFinalizers())
		h := w.hosts.host(mname)
		if h == nil {
			return false, s
		}
		want := fmt.Sprint([]any{map[string]any{"type": "InternalIP", "address": h.ip.String()}, map[string]any{"type": "Hostname", "address": mname}})
		return id == "lab://"+mname && ready && fmt.Sprint(addrs) == want && slices.Contains(got.GetFinalizers(), controller.MachineFinalizer), s
	})
	h := w.hosts.host(mname)
	if got, err := os.ReadFile(filepath.Join(h.root, "etc/lab/hostname")); err != nil || string(got) != mname {
		t.Errorf("bootstrap wrote /etc/lab/hostname = %q, %v; want the local_hostname %s", got, err, mname)
	}
	if h.meta["instance_id"] == "" {
		t.Errorf("host metadata %v: no instance_id", h.meta)
	}
	// Registered while its bootstrap runs, as kubeadm init needs the endpoint; nothing listens
	// on the fake host's 6443, so the tcp check keeps it out of rotation.
	w.eventually("host registered once it runs", func() (bool, string) {
		_, in := b.Backends()[mname]
		return in, fmt.Sprint(b.Backends())
	})
	if h.Bootstrapped() {
		t.Fatal("the fake host is bootstrapped before finish")
	}
	time.Sleep(1500 * time.Millisecond) // more than one check interval
	if healthy := b.Backends()[mname]; healthy {
		t.Errorf("host in rotation though its apiserver does not answer: %v", b.Backends())
	}
	h.finish(t)

	// Cluster API deletes the Machine: it drains (held here by a finalizer), then deletes the
	// LabMachine.
	hold := "test.credwatch.io/hold"
	m := w.get(controller.Machines, mname)
	m.SetFinalizers(append(m.GetFinalizers(), hold))
	if _, err := w.res(controller.Machines).Update(w.ctx, m, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.res(controller.Machines).Delete(w.ctx, mname, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	drainAt := time.Now()
	if d == infra.OnDrain {
		w.eventually("deregistered on drain", func() (bool, string) {
			_, in := b.Backends()[mname]
			return !in, fmt.Sprint(b.Backends())
		})
		t.Logf("deregistered %s after the Machine's deletion", time.Since(drainAt).Round(time.Millisecond))
	} else {
		time.Sleep(1500 * time.Millisecond) // several passes after the Machine's update
		if _, in := b.Backends()[mname]; !in {
			t.Fatalf("on-machine-delete: host left the balancer while the Machine drained")
		}
	}
	if w.hosts.count("delete "+mname) != 0 {
		t.Fatalf("host deleted before its LabMachine")
	}
	if err := w.res(infra.LabMachines).Delete(w.ctx, mname, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.eventually("LabMachine gone", func() (bool, string) {
		_, err := w.res(infra.LabMachines).Get(w.ctx, mname, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if n := w.hosts.count("delete " + mname); n != 1 {
		t.Errorf("host deleted %d times, want 1", n)
	}
	if _, in := b.Backends()[mname]; in {
		t.Errorf("host still in the balancer after its LabMachine went")
	}
	wantOrder := []infra.Step{infra.CreateHost, infra.Register, infra.Deregister, infra.DeleteHost, infra.RemoveFinalizer}
	if got := w.steps(mname); !subsequence(wantOrder, got) {
		t.Errorf("steps %v, want %v in that order", got, wantOrder)
	}

	// Let the Machine go, then the LabCluster.
	m = w.get(controller.Machines, mname)
	m.SetFinalizers(slices.DeleteFunc(m.GetFinalizers(), func(f string) bool { return f == hold }))
	if _, err := w.res(controller.Machines).Update(w.ctx, m, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.res(infra.LabClusters).Delete(w.ctx, w.name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.eventually("LabCluster gone, balancer closed", func() (bool, string) {
		_, err := w.res(infra.LabClusters).Get(w.ctx, w.name, metav1.GetOptions{})
		return apierrors.IsNotFound(err) && w.c.Balancer(ns, w.name) == nil, fmt.Sprint(err)
	})
}

// steps are the timeline's steps of LabMachine name.
func (w *world) steps(name string) []infra.Step {
	var out []infra.Step
	for _, e := range w.c.Events() {
		if e.Machine == name {
			out = append(out, e.Step)
		}
	}
	return out
}

func (w *world) step(name string, s infra.Step) bool { return slices.Contains(w.steps(name), s) }

// subsequence reports whether want appears in got in order, not necessarily adjacent.
func subsequence(want, got []infra.Step) bool {
	i := 0
	for _, s := range got {
		if i < len(want) && s == want[i] {
			i++
		}
	}
	return i == len(want)
}

// fakeHosts records calls; a host writes its bootstrap's files under root/NAME (cloudinit) and
// its sentinel when the test says the bootstrap finished.
type fakeHosts struct {
	root  string
	mu    sync.Mutex
	hosts map[string]*fakeHost
	calls []string
}

var _ controller.Hosts = (*fakeHosts)(nil)

func (f *fakeHosts) Create(_ context.Context, name string, bootstrap []byte, meta map[string]string) (controller.Host, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "create "+name)
	if h, ok := f.hosts[name]; ok {
		return h, nil
	}
	cfg, err := cloudinit.Parse(bootstrap, meta)
	if err != nil {
		return nil, err
	}
	h := &fakeHost{name: name, ip: netip.AddrFrom4([4]byte{127, 0, 0, byte(10 + len(f.hosts))}), root: filepath.Join(f.root, name), meta: meta}
	if err := cfg.WriteFiles(h.root); err != nil {
		return nil, err
	}
	f.hosts[name] = h
	return h, nil
}

func (f *fakeHosts) Delete(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "delete "+name)
	delete(f.hosts, name)
	return nil
}

func (f *fakeHosts) count(call string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == call {
			n++
		}
	}
	return n
}

func (f *fakeHosts) host(name string) *fakeHost {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hosts[name]
}

type fakeHost struct {
	name string
	ip   netip.Addr
	root string
	meta map[string]string
}

func (h *fakeHost) Name() string   { return h.name }
func (h *fakeHost) IP() netip.Addr { return h.ip }
func (h *fakeHost) Bootstrapped() bool {
	_, err := os.Stat(filepath.Join(h.root, cloudinit.Sentinel))
	return err == nil
}

// finish is the end of the bootstrap's runcmd: kubeadm succeeded, the sentinel is written.
func (h *fakeHost) finish(t testing.TB) {
	p := filepath.Join(h.root, cloudinit.Sentinel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("success\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
