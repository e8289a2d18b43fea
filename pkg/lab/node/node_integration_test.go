// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/hostnet"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/node"
)

// TestIntegrationNode runs two real nodes on one machine against a lab: both Ready, a pod with a
// projected service-account token Running on node-2, the token written by the kubelet, the pod's
// log read through the apiserver; node-1 stops leaving nothing while node-2 runs on, then node-2.
func TestIntegrationNode(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	kubelet, kubeProxy := nodeBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// A hosts-network lab: its load balancer is on the lab network and every apiserver has the
	// flags node.APIServerArgs returns; the nodes join its network. No scheduler or controller
	// manager: the test pod names its node.
	l := labtest.Start(t, lab.Options{Members: 1})
	netw := l.Network()
	if netw == nil {
		t.Fatal("the lab has no hosts network")
	}
	base := node.Config{
		APIServer: "https://" + l.LBAddress(),
		CAPEM:     l.CA(), Issue: l.IssueCertificate,
		Kubelet: kubelet, KubeProxy: kubeProxy,
		ClusterCIDR: node.ClusterCIDR,
		Images:      []string{buildPauseImage(t, node.DefaultSandboxImage)},
		Log:         testLog{t},
	}
	cs, err := kubernetes.NewForConfig(l.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*node.Node
	for i := 1; i <= 2; i++ {
		t0 := time.Now()
		n := startNode(t, ctx, netw, base, i, l.Dir())
		if err := n.WaitReady(ctx, cs); err != nil {
			t.Fatal(err)
		}
		t.Logf("FIGURE %s Ready %s after node.Start was called", n.Name(), time.Since(t0).Round(time.Millisecond))
		nodes = append(nodes, n)
	}

	pod := runTokenPod(t, ctx, cs, "node-2")
	checkToken(t, nodes[1], pod)
	checkLogs(t, ctx, cs, pod)
	logRSS(t, nodes[1])

	for _, n := range nodes {
		t1 := time.Now()
		if err := n.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("FIGURE %s Stop took %s", n.Name(), time.Since(t1).Round(time.Millisecond))
		if left := n.Leftovers(); len(left) > 0 {
			t.Errorf("%s left behind after Stop: %s", n.Name(), strings.Join(left, "; "))
		}
		if n.Name() == "node-1" { // node-2's kubelet still serves its pod's log
			checkLogs(t, ctx, cs, pod)
		}
	}
}

// startNode starts node-i on a new host of netw; it is stopped by t.Cleanup (a second Stop is
// harmless), its logs dumped if the test failed.
func startNode(t *testing.T, ctx context.Context, netw *hostnet.Network, cfg node.Config, i int, labDir string) *node.Node {
	t.Helper()
	cfg.Name = fmt.Sprintf("node-%d", i)
	cfg.Dir = filepath.Join(labDir, "nodes", cfg.Name)
	a := netw.Subnet().Addr().As4()
	a[3] = byte(200 + i)
	var err error
	if cfg.Host, err = netw.AddHost(ctx, cfg.Name, netip.AddrFrom4(a)); err != nil {
		t.Fatal(err)
	}
	if cfg.PodCIDR, err = node.PodCIDRFor(i); err != nil {
		t.Fatal(err)
	}
	n, err := node.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, c := range []string{"containerd", "kubelet", "kube-proxy"} {
				t.Logf("--- %s %s log ---\n%s", cfg.Name, c, tailFile(n.LogFile(c), 40))
			}
		}
		_ = n.Stop(context.Background())
	})
	return n
}

// nodeBinaries returns the kubelet and kube-proxy, failing (never skipping) when a node
// prerequisite is missing.
func nodeBinaries(t *testing.T) (kubelet, kubeProxy string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("node test needs root (namespaces, cgroups, containers)")
	}
	binDir := lab.DefaultBinDir()
	var err error
	if kubelet, err = lab.Binary(binDir, lab.DefaultVersion, "kubelet"); err != nil {
		t.Fatal(err)
	}
	if kubeProxy, err = lab.Binary(binDir, lab.DefaultVersion, "kube-proxy"); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{node.DefaultContainerd, node.DefaultCtr, node.DefaultRunc, filepath.Join(node.DefaultCNIBinDir, "bridge"), "iptables", "nsenter"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Fatalf("%s is missing (hack/deps.sh installs containerd, runc, containernetworking-plugins, iptables): %v", b, err)
		}
	}
	return kubelet, kubeProxy
}

const tokenAudience = "credwatch-node-test"

// runTokenPod creates a service account and a pod on nodeName with a projected token (no scheduler
// or controller manager: nodeName is set and the account created by hand) and waits for Running.
func runTokenPod(t *testing.T, ctx context.Context, cs kubernetes.Interface, nodeName string) *corev1.Pod {
	t.Helper()
	ns := "node-it"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "tokens"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "token-reader", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName:                     nodeName,
			ServiceAccountName:           "tokens",
			AutomountServiceAccountToken: ptr.To(false),
			Volumes: []corev1.Volume{{Name: "tokens", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
					Path: "token", Audience: tokenAudience, ExpirationSeconds: ptr.To[int64](600),
				}}},
			}}}},
			Containers: []corev1.Container{{
				Name: "reader", Image: testPodImage, ImagePullPolicy: corev1.PullNever,
				Args:         []string{"/var/run/secrets/tokens/token"},
				VolumeMounts: []corev1.VolumeMount{{Name: "tokens", MountPath: "/var/run/secrets/tokens"}},
			}},
		},
	}
	t0 := time.Now()
	created, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			t.Logf("FIGURE pod create → Running %s", time.Since(t0).Round(time.Millisecond))
			return p
		}
		if ctx.Err() != nil {
			t.Fatalf("pod %s/%s not Running: %v (status %+v)", ns, created.Name, ctx.Err(), p.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkToken reads the token the kubelet wrote (through the node's mount namespace) and checks
// its claims bind it to the pod; the token itself is never printed.
func checkToken(t *testing.T, n *node.Node, pod *corev1.Pod) {
	t.Helper()
	p := filepath.Join(n.KubeletRoot(), "pods", string(pod.UID), "volumes", "kubernetes.io~projected", "tokens", "token")
	data, err := os.ReadFile(n.NodePath(p))
	if err != nil {
		t.Fatalf("token the kubelet wrote: %v", err)
	}
	parts := strings.Split(strings.TrimSpace(string(data)), ".")
	if len(parts) != 3 {
		t.Fatalf("token file holds %d dot-separated parts, want a JWS", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Aud []string `json:"aud"`
		K8s struct {
			Pod struct {
				Name string `json:"name"`
				UID  string `json:"uid"`
			} `json:"pod"`
			Node struct {
				Name string `json:"name"`
			} `json:"node"`
		} `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	if len(claims.Aud) != 1 || claims.Aud[0] != tokenAudience || claims.K8s.Pod.UID != string(pod.UID) || claims.K8s.Node.Name != n.Name() {
		t.Errorf("token claims: aud %v, pod %s (%s), node %q; want %s, the pod %s, %s",
			claims.Aud, claims.K8s.Pod.Name, claims.K8s.Pod.UID, claims.K8s.Node.Name, tokenAudience, pod.UID, n.Name())
	}
}

// checkLogs reads the pod's log through the apiserver (which asks the kubelet).
func checkLogs(t *testing.T, ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) {
	t.Helper()
	var logs []byte
	var err error
	for i := 0; i < 50; i++ {
		logs, err = cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err == nil && strings.Contains(string(logs), "bytes") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("pod log through the apiserver: %v", err)
	}
	if !strings.Contains(string(logs), "pause: started") || !strings.Contains(string(logs), "/var/run/secrets/tokens/token holds") {
		t.Errorf("pod log = %q, want the start line and the token's size", logs)
	}
}
