// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package helm

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// interval is the watcher's --interval in the in-cluster test: short, so that "within 2
// intervals" is a few seconds.
const interval = 2 * time.Second

// TestIntegrationChartInCluster installs the chart for real with the Helm SDK on a lab with a node,
// pulling the image from a registry as a cluster would: `make image-push` pushes the multi-arch
// image to distribution's registry (startRegistry) on the machine's loopback, the lab's node
// reaches it through Options.Registries, and the chart names only the repository (the tag is its
// appVersion). The watcher pod runs the pushed index's image on the node, is Running and ready, finds the members through the kubernetes EndpointSlice and its
// metrics, read through the apiserver's service proxy, show every member up and the trust matrix
// whole. A member added with its own SA key (`lab add-member --sa-key new`) shows as broken pairs
// and a Warning Event naming it within 2 intervals; removing it clears both.
// Then (same lab) `credwatch logs --from-cluster --controllers` reads real pod logs (see podlogs).
func TestIntegrationChartInCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	t0 := time.Now()
	reg := startRegistry(t)
	ref, digest := imagePush(t, reg)
	t.Logf("make image-push REGISTRY=%s: %s@%s in %s", reg, ref, digest, time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	l := labtest.Start(t, lab.Options{Members: 2, Nodes: 1, Registries: []string{reg}})
	t.Logf("lab up --members 2 --nodes 1: %s", time.Since(t0).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(l.RESTConfig())
	const ns, release = "credwatch", "credwatch"

	t1 := time.Now()
	helmInstall(t, l, ns, release, reg+"/credwatch")
	pod := waitPodReady(ctx, t, cs, ns, "app.kubernetes.io/instance="+release)
	t.Logf("helm install → pod %s Running and ready on %s in %s", pod.Name, pod.Spec.NodeName, time.Since(t1).Round(time.Millisecond))
	checkPulled(t, pod, ref, digest)
	sc := scraper{cs: cs, ns: ns, svc: release + ":9090"}

	members := memberNames(l)
	m := sc.waitFor(ctx, t, 30*time.Second, "every member up, trust whole", func(m metrics) string { return m.healthy(members) })
	t.Logf("metrics: %d members up, %d trust pairs accepted", len(members), len(m.trust))

	t.Run("key drift", func(t *testing.T) {
		nm, err := l.AddMember(ctx, lab.MemberOptions{SAKey: lab.SAKeyNew})
		if err != nil {
			t.Fatal(err)
		}
		labtest.WaitEndpointSlice(t, l, len(members)+1)
		listed := time.Now()
		// Intervals are counted as the watcher ran them: each one that finished has its own
		// credwatch_last_check_timestamp_seconds (a time slot that passed while the previous
		// interval overran has none).
		start := sc.get(ctx, t).lastCheck
		ran := map[float64]bool{}
		m := sc.waitFor(ctx, t, 30*time.Second, "broken pairs of "+nm.Name, func(m metrics) string {
			if m.lastCheck > start {
				ran[m.lastCheck] = true
			}
			return m.broken(nm.Name, members)
		})
		took := time.Since(listed)
		t.Logf("broken pairs of %s in the metrics %s after it was in the EndpointSlice (last check at %.3f, then %v): %s",
			nm.Name, took.Round(time.Millisecond), start, slices.Sorted(maps.Keys(ran)), m)
		if len(ran) > 2 {
			t.Errorf("the broken pairs took %d intervals after the member was listed, want ≤ 2", len(ran))
		}
		t.Cleanup(func() {
			if t.Failed() { // what the watcher said about its Events
				raw, _ := cs.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
				for _, l := range strings.Split(string(raw), "\n") {
					if strings.Contains(l, "vent") && !strings.HasPrefix(l, "{") {
						t.Logf("watcher: %s", l)
					}
				}
			}
		})
		ev := waitEvent(ctx, t, cs, corev1.EventTypeWarning, nm.Name, 2*interval+5*time.Second)
		t.Logf("Warning Event: %s %s: %s", ev.Reason, ev.InvolvedObject.Name, ev.Message)

		if err := l.RemoveMember(ctx, nm.Name, lab.RemoveOptions{}); err != nil {
			t.Fatal(err)
		}
		labtest.WaitEndpointSlice(t, l, len(members))
		sc.waitFor(ctx, t, 30*time.Second, "broken pairs cleared", func(m metrics) string {
			if s := m.healthy(members); s != "" {
				return s
			}
			return m.absent(nm.Name)
		})
		ev = waitEvent(ctx, t, cs, corev1.EventTypeNormal, nm.Name, 2*interval+5*time.Second)
		t.Logf("cleared: %s %s: %s", ev.Reason, ev.InvolvedObject.Name, ev.Message)
	})
	t.Logf("chart in cluster: %s", time.Since(t0).Round(time.Millisecond))
	helmUninstall(t, l, ns, release)

	t.Run("logs --from-cluster --controllers", func(t *testing.T) {
		t2 := time.Now()
		p := startPodControlPlane(ctx, t, l, cs)
		t.Logf("kube-apiserver pod ready on %s in %s", p.node.Name, time.Since(t2).Round(time.Millisecond))
		p.startControllerManager(ctx, t, l, cs)
		p.presentForeignToken(ctx, t, cs, 3)
		waitPodLog(ctx, t, cs, "kube-apiserver-"+p.node.Name, "Unable to authenticate the request")
		waitPodLog(ctx, t, cs, "kube-controller-manager-"+p.node.Name, "Unauthorized")
		rep := runLogsCluster(ctx, t, l.AdminKubeconfig())
		for _, in := range rep.Inputs {
			t.Logf("input %s on %s: %d lines, read %v", in.Name, in.Host, in.Lines, in.Read)
		}
		for _, f := range rep.Failures {
			t.Logf("failure: %s %s on %s ×%d", f.Component, f.Cause, f.Host, f.Count)
		}
		rep.assert(t, p.node.Name)
		t3 := time.Now()
		p.stop(ctx, t, cs)
		t.Logf("control-plane pods deleted (grace 0) in %s", time.Since(t3).Round(time.Millisecond))
		t.Logf("logs --from-cluster --controllers on real pod logs: %s", time.Since(t2).Round(time.Millisecond))
	})
	t.Logf("both parts done %s after the start; the rest is the lab's teardown", time.Since(t0).Round(time.Millisecond))
}

// helmInstall installs the chart with the Helm SDK, as `helm install --wait` would, with the image
// from repository at the chart's default tag and a short interval.
func helmInstall(t *testing.T, l *lab.Lab, ns, release, repository string) {
	t.Helper()
	cfg := actionConfig(t, l, ns)
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.CreateNamespace = release, ns, true
	in.Wait, in.Timeout = true, 3*time.Minute
	vals := map[string]any{
		"image": map[string]any{"repository": repository},
		"watch": map[string]any{"interval": interval.String()},
		// Probe every second: readiness follows the first interval.
		"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/readyz", "port": "metrics"}, "periodSeconds": 1},
	}
	rel, err := in.RunWithContext(context.Background(), ch, vals)
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	t.Logf("helm install: release %s revision %d %s", rel.Name, rel.Version, rel.Info.Status)
}

// checkPulled asserts that the watcher container runs ref (the chart's default tag is the tag
// make image-push gave the image) and that the kubelet reports the pushed index's digest.
func checkPulled(t *testing.T, pod corev1.Pod, ref, digest string) {
	t.Helper()
	if got := pod.Spec.Containers[0].Image; got != ref {
		t.Errorf("the chart's image is %s, make image-push pushed %s", got, ref)
	}
	for _, st := range pod.Status.ContainerStatuses {
		if !strings.HasSuffix(st.ImageID, "@"+digest) {
			t.Errorf("container %s runs %s (%s), want the pushed index %s", st.Name, st.Image, st.ImageID, digest)
		}
		t.Logf("container %s: %s, pulled as %s", st.Name, st.Image, st.ImageID)
	}
}

// helmUninstall uninstalls the release as `helm uninstall` does.
func helmUninstall(t *testing.T, l *lab.Lab, ns, release string) {
	t.Helper()
	if _, err := action.NewUninstall(actionConfig(t, l, ns)).Run(release); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
}

func actionConfig(t *testing.T, l *lab.Lab, ns string) *action.Configuration {
	t.Helper()
	kubeconfig := l.AdminKubeconfig()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	flags.Namespace = &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func waitPodReady(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, selector string) corev1.Pod {
	t.Helper()
	var last string
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			last = err.Error()
			continue
		}
		for _, p := range list.Items {
			last = fmt.Sprintf("%s %s", p.Name, p.Status.Phase)
			if p.Status.Phase != corev1.PodRunning {
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return p
				}
			}
		}
	}
	t.Fatalf("no pod %q Running and ready after 2 min (last: %s)", selector, last)
	return corev1.Pod{}
}

// waitEvent waits for an Event of type typ whose message names member, recorded by the watcher.
func waitEvent(ctx context.Context, t *testing.T, cs kubernetes.Interface, typ, member string, within time.Duration) corev1.Event {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(500 * time.Millisecond) {
		list, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "type=" + typ + ",source=credwatch-watch"})
		if err == nil {
			for _, e := range list.Items {
				if strings.Contains(e.Message, member) {
					return e
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s Event naming %s after %s (err %v)", typ, member, within, err)
		}
	}
}

func memberNames(l *lab.Lab) []string {
	var out []string
	for _, m := range l.Members() {
		out = append(out, m.Name)
	}
	return out
}
