// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/deploy"
)

// WatcherNamespace holds the in-cluster watcher InstallWatcher installs.
const WatcherNamespace = deploy.LabWatcherNamespace

// watcherKind is a kind of the chart's rendering and its resource.
type watcherKind struct {
	kind string
	gvr  schema.GroupVersionResource
}

// watcherKinds are the kinds of the chart's rendering, in the order Helm installs them.
var watcherKinds = []watcherKind{
	{"ServiceAccount", schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}},
	{"ClusterRole", schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}},
	{"ClusterRoleBinding", schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}},
	{"Role", schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}},
	{"RoleBinding", schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}},
	{"Service", schema.GroupVersionResource{Version: "v1", Resource: "services"}},
	{"Deployment", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
}

// InstallWatcher installs credwatch's Helm chart in the cluster rc reaches, as a platform team
// would on its management cluster: the objects of deploy.LabWatcher (the chart rendered with the
// lab's values by hack/helm, since the lab carries no Helm SDK) in Helm's install order, with the
// cluster's endpoint (rc.Host) as the watcher's --server, then waits until its Pod is ready. The
// watcher runs the lab image local/credwatch:lab, which every host of a self-managed lab has.
func (c *Lab) InstallWatcher(ctx context.Context, rc *rest.Config) error {
	objs, err := deploy.LabWatcher(rc.Host)
	if err != nil {
		return fmt.Errorf("capi lab: watcher: %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("capi lab: watcher: %w", err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("capi lab: watcher: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: WatcherNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("capi lab: watcher: create namespace %s: %w", WatcherNamespace, err)
	}
	sort.SliceStable(objs, func(i, j int) bool { return kindRank(objs[i]) < kindRank(objs[j]) })
	for _, o := range objs {
		r := kindRank(o)
		if r == len(watcherKinds) {
			return fmt.Errorf("capi lab: watcher: the chart renders a %s, which the lab does not install", o.GetKind())
		}
		var ri dynamic.ResourceInterface = dyn.Resource(watcherKinds[r].gvr)
		if o.GetNamespace() != "" {
			ri = dyn.Resource(watcherKinds[r].gvr).Namespace(o.GetNamespace())
		}
		if _, err := ri.Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("capi lab: watcher: create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return c.waitAvailable(ctx, cs, WatcherNamespace, 1, "in-cluster watcher")
}

// LogLine is one line a container wrote, with the time its runtime gave it.
type LogLine struct {
	At   time.Time
	Text string
}

// WatcherLines are the lines the in-cluster watcher's containers wrote between from and to (on
// every host the lab has made), oldest first.
func (c *Lab) WatcherLines(from, to time.Time) []LogLine {
	var files []string
	for _, dir := range c.podLogDirs() {
		fs, _ := filepath.Glob(filepath.Join(dir, WatcherNamespace+"_*", "credwatch", "*.log"))
		files = append(files, fs...)
	}
	sort.Strings(files)
	var out []LogLine
	for _, l := range readCRI(files, from, to) {
		out = append(out, LogLine{At: l.at, Text: l.text})
	}
	return out
}

// kindRank is o's kind's place in watcherKinds, len(watcherKinds) for a kind not in it.
func kindRank(o *unstructured.Unstructured) int {
	if i := slices.IndexFunc(watcherKinds, func(k watcherKind) bool { return k.kind == o.GetKind() }); i >= 0 {
		return i
	}
	return len(watcherKinds)
}
