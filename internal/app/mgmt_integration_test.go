// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/clusterapi"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationHostileManagementCluster: a real management cluster (the lab's kube-apiserver
// and etcd, with Cluster API's Cluster kind) serves <cluster>-kubeconfig Secrets written by
// someone who can write one Secret: an exec plugin, a tokenFile, an auth-provider, file paths
// and a proxy, in data and in stringData. check --capi-cluster refuses each with one line naming the
// Secret and the field (exit 2); preflight --capi-cluster, whose prediction rests on the
// management cluster's objects, says in a note that the workload members were not read, naming
// the Secret and the field. No command runs, no local file is read or sent (the server the
// Secrets name is a listener that counts connections), and the planted secrets appear in no
// output.
func TestIntegrationHostileManagementCluster(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(l.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	installCRD(ctx, t, dyn, clusterapi.ClusterResource, "Cluster")
	installCRD(ctx, t, dyn, clusterapi.KubeadmControlPlaneResource, "KubeadmControlPlane")

	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	var dialled atomic.Int64
	go func() {
		for {
			c, err := sink.Accept()
			if err != nil {
				return
			}
			dialled.Add(1)
			_ = c.Close()
		}
	}()
	dir := t.TempDir()
	marker := filepath.Join(dir, "exec-ran")
	const planted = "planted-local-token-7f3e9c0a55d1"
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	server := "https://" + sink.Addr().String()
	kc := func(user string) string {
		return "apiVersion: v1\nkind: Config\nclusters:\n- name: w\n  cluster:\n    server: " + server +
			"\n    insecure-skip-tls-verify: true\ncontexts:\n- name: w\n  context: {cluster: w, user: u}\ncurrent-context: w\nusers:\n- name: u\n  user:\n" + user
	}
	cases := []struct {
		name, user, field string
		stringData        bool
	}{
		{"exec", "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [\"-c\", \"touch " + marker + "\"]\n      interactiveMode: Never\n", "exec", false},
		{"exec-stringdata", "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [\"-c\", \"touch " + marker + "\"]\n      interactiveMode: Never\n", "exec", true},
		{"tokenfile", "    tokenFile: " + tokenFile + "\n", "tokenFile", false},
		{"authprovider", "    auth-provider:\n      name: oidc\n      config: {client-id: x, id-token: " + planted + "}\n", "auth-provider", false},
		{"certfile", "    client-certificate: " + tokenFile + "\n    client-key: " + tokenFile + "\n", "client-certificate", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			createCluster(ctx, t, dyn, c.name, kc(c.user), c.stringData)
			var out, errOut bytes.Buffer
			code := Main([]string{"credwatch", "check", "--kubeconfig", l.AdminKubeconfig(), "--capi-cluster", c.name, "-n", "default",
				"--no-cloud", "--timeout", "10s", "-o", "json"}, strings.NewReader(""), &out, &errOut)
			if code != cli.ExitUsage {
				t.Errorf("exit %d, want %d\nstderr: %s", code, cli.ExitUsage, errOut.String())
			}
			lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], "Secret default/"+c.name+"-kubeconfig") || !strings.Contains(lines[0], c.field) {
				t.Errorf("stderr %q, want one line naming the Secret and %s", errOut.String(), c.field)
			}
			if strings.Contains(out.String()+errOut.String(), planted) {
				t.Errorf("the planted token was printed:\n%s%s", out.String(), errOut.String())
			}
			out.Reset()
			errOut.Reset()
			code = Main([]string{"credwatch", "preflight", "--kubeconfig", l.AdminKubeconfig(), "--capi-cluster", c.name, "-n", "default",
				"--capi-version", "v1.14.2", "--timeout", "10s", "-o", "json"}, strings.NewReader(""), &out, &errOut)
			if code != cli.ExitOK && code != cli.ExitFindings {
				t.Errorf("preflight: exit %d, want a prediction from the objects\nstderr: %s", code, errOut.String())
			}
			if all := out.String() + errOut.String(); !strings.Contains(all, "Secret default/"+c.name+"-kubeconfig") || !strings.Contains(all, c.field) ||
				!strings.Contains(all, "the workload members are not read") {
				t.Errorf("preflight does not say it refused the Secret's %s:\n%s", c.field, all)
			}
			if strings.Contains(out.String()+errOut.String(), planted) {
				t.Errorf("preflight printed the planted token:\n%s%s", out.String(), errOut.String())
			}
		})
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("an exec plugin from a Secret ran on this machine")
	}
	if n := dialled.Load(); n > 0 {
		t.Errorf("%d connections to the server the Secrets name: nothing may be sent there before the kubeconfig is accepted", n)
	}
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRD installs one of Cluster API's kinds, at the version credwatch reads, with no schema
// of its own: the test is about the Secrets, not the objects.
func installCRD(ctx context.Context, t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, kind string) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": gvr.Resource + "." + gvr.Group},
		"spec": map[string]any{
			"group": gvr.Group, "scope": "Namespaced",
			"names": map[string]any{"plural": gvr.Resource, "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List"},
			"versions": []any{map[string]any{"name": gvr.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		}}}
	if _, err := dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the %s CRD: %v", kind, err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		_, err := dyn.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %s CRD is not served after a minute: %v", kind, err)
		}
	}
}

// createCluster creates Cluster default/name, its KubeadmControlPlane name-control-plane and its
// name-kubeconfig Secret holding kubeconfig, in data or, as a hand-written manifest would, in
// stringData.
func createCluster(ctx context.Context, t *testing.T, dyn dynamic.Interface, name, kubeconfig string, stringData bool) {
	t.Helper()
	cl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterapi.ClusterResource.GroupVersion().String(), "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": map[string]any{
			"controlPlaneRef": map[string]any{"apiVersion": clusterapi.KubeadmControlPlaneResource.GroupVersion().String(),
				"kind": "KubeadmControlPlane", "name": name + "-control-plane"}}}}
	if _, err := dyn.Resource(clusterapi.ClusterResource).Namespace("default").Create(ctx, cl, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Cluster %s: %v", name, err)
	}
	kcp := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterapi.KubeadmControlPlaneResource.GroupVersion().String(), "kind": "KubeadmControlPlane",
		"metadata": map[string]any{"name": name + "-control-plane", "namespace": "default"},
		"spec":     map[string]any{"replicas": int64(1), "version": "v1.36.3", "kubeadmConfigSpec": map[string]any{}}}}
	if _, err := dyn.Resource(clusterapi.KubeadmControlPlaneResource).Namespace("default").Create(ctx, kcp, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create KubeadmControlPlane %s-control-plane: %v", name, err)
	}
	sec := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
		"metadata": map[string]any{"name": name + "-kubeconfig", "namespace": "default",
			"labels": map[string]any{clusterapi.ClusterNameLabel: name}}}}
	if stringData {
		sec.Object["stringData"] = map[string]any{"value": kubeconfig}
	} else {
		sec.Object["data"] = map[string]any{"value": base64.StdEncoding.EncodeToString([]byte(kubeconfig))}
	}
	if _, err := dyn.Resource(clusterapi.SecretResource).Namespace("default").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Secret %s-kubeconfig: %v", name, err)
	}
}
