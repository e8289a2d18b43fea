// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package helm

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/credwatch/credwatch/internal/cli"
	cmdlogs "github.com/credwatch/credwatch/internal/cmd/logs"
	"github.com/credwatch/credwatch/pkg/lab"
	labimage "github.com/credwatch/credwatch/pkg/lab/image"
)

// podLab is a control plane that runs as pods on a lab node, as kubeadm's static pods do: a real
// kube-apiserver (the lab's binary, with the first member's command line) whose service-account
// key drifted, and a real kube-controller-manager whose kubeconfig holds a token that apiserver
// minted. Their logs are what the kubelet keeps of the containers' output.
type podLab struct {
	dir    string // files the pods read, mounted at the same path
	node   lab.NodeStatus
	server string // https://NODE-IP:6443
	rc     *rest.Config
}

// startPodControlPlane starts the kube-apiserver pod and waits until it answers /readyz.
// It listens on the node's address (hostNetwork, like a static control-plane pod) and keeps its
// objects under its own etcd prefix of the lab's first etcd member, so the lab's cluster is
// left alone; its service-account key is a new one.
func startPodControlPlane(ctx context.Context, t *testing.T, l *lab.Lab, cs kubernetes.Interface) *podLab {
	t.Helper()
	p := &podLab{dir: filepath.Join(l.Dir(), "podlab"), node: l.Nodes()[0]}
	p.server = "https://" + p.node.IP + ":6443"
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	keyFile, pubFile := writeSAKey(t, p.dir)
	m := l.Members()[0]
	var args []string
	for _, a := range m.Args[1:] {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--advertise-address", "--bind-address":
			a = name + "=" + p.node.IP
		case "--service-account-signing-key-file":
			a = name + "=" + keyFile
		case "--service-account-key-file":
			a = name + "=" + pubFile
		}
		args = append(args, a)
	}
	args = append(args, "--etcd-prefix=/credwatch-podlab", "--endpoint-reconciler-type=none")
	pod := p.pod("kube-apiserver", m.Args[0], args, filepath.Join(l.Dir(), "pki"))
	if _, err := cs.CoreV1().Pods("kube-system").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.rc = l.RESTConfig()
	p.rc.Host = p.server
	p.rc.TLSClientConfig.ServerName = "kubernetes" // the member's serving certificate names the Service
	hc, err := rest.HTTPClientFor(p.rc)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		resp, err := hc.Get(p.server + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		if got, err := cs.CoreV1().Pods("kube-system").Get(ctx, pod.Name, metav1.GetOptions{}); err == nil &&
			len(got.Status.ContainerStatuses) > 0 && got.Status.ContainerStatuses[0].RestartCount >= 2 {
			t.Fatalf("the kube-apiserver pod restarted twice:\n%s", podDiagnosis(ctx, cs, p.node, pod.Name))
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kube-apiserver pod is not ready after 90 s: %s\n%s", last, podDiagnosis(ctx, cs, p.node, pod.Name))
		}
	}
}

// pod is a kube-system pod labelled component=NAME on the node, running the lab binary bin (and
// the host's C library it links) with the host network, with dirs mounted read-only at their own
// paths.
func (p *podLab) pod(name, bin string, args []string, dirs ...string) *corev1.Pod {
	bin, _ = filepath.EvalSymlinks(bin)
	dirs = append(dirs, p.dir, filepath.Dir(bin), "/lib", "/lib64")
	c := corev1.Container{Name: name, Image: labimage.PauseRef, ImagePullPolicy: corev1.PullNever,
		Command: append([]string{bin}, args...)}
	var vols []corev1.Volume
	for i, d := range dirs {
		v := fmt.Sprintf("v%d", i)
		vols = append(vols, corev1.Volume{Name: v, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: d}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: v, MountPath: d, ReadOnly: true})
	}
	root := int64(0) // as kubeadm's control-plane pods: the lab's keys are root's
	c.SecurityContext = &corev1.SecurityContext{RunAsUser: &root, RunAsGroup: &root}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + p.node.Name, Namespace: "kube-system",
			Labels: map[string]string{"component": name, "tier": "control-plane"}},
		Spec: corev1.PodSpec{NodeName: p.node.Name, HostNetwork: true, Containers: []corev1.Container{c}, Volumes: vols,
			AutomountServiceAccountToken: new(bool), Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}
}

// startControllerManager starts a kube-controller-manager pod whose kubeconfig holds a token the
// drifted kube-apiserver pod minted for kube-system/kube-controller-manager: every member of the
// lab rejects it, and the controller manager logs Unauthorized as it tries to take its lease.
func (p *podLab) startControllerManager(ctx context.Context, t *testing.T, l *lab.Lab, cs kubernetes.Interface) {
	t.Helper()
	pcs := kubernetes.NewForConfigOrDie(p.rc)
	const sa = "kube-controller-manager"
	if _, err := pcs.CoreV1().ServiceAccounts("kube-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := pcs.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, sa, &authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(p.dir, "kube-controller-manager.kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["lab"] = &clientcmdapi.Cluster{Server: "https://" + l.LBAddress(), CertificateAuthorityData: l.CA()}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["lab"] = &clientcmdapi.Context{Cluster: "lab", AuthInfo: sa}
	cfg.CurrentContext = "lab"
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	bin, err := lab.Binary(l.Options().BinDir, l.Options().Version, "kube-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	pod := p.pod("kube-controller-manager", bin, []string{"--kubeconfig=" + kc, "--leader-elect=true",
		"--bind-address=" + p.node.IP, "--secure-port=10257"})
	if _, err := cs.CoreV1().Pods("kube-system").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// stop deletes the control-plane pods at once (grace period 0) and waits until they are gone, so
// that the node's teardown does not wait for a kube-apiserver's graceful shutdown.
func (p *podLab) stop(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	zero := int64(0)
	names := []string{"kube-apiserver-" + p.node.Name, "kube-controller-manager-" + p.node.Name}
	for _, n := range names {
		if err := cs.CoreV1().Pods("kube-system").Delete(ctx, n, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Errorf("delete %s: %v", n, err)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		list, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "tier=control-plane"})
		if err == nil && len(list.Items) == 0 {
			return
		}
	}
	t.Errorf("control-plane pods still there 30 s after their deletion")
}

// presentForeignToken presents a token the lab's members minted (the shared key) to the
// kube-apiserver pod, which does not know that key, n times.
func (p *podLab) presentForeignToken(ctx context.Context, t *testing.T, cs kubernetes.Interface, n int) {
	t.Helper()
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc := rest.AnonymousClientConfig(p.rc)
	rc.BearerToken = tr.Status.Token
	pcs := kubernetes.NewForConfigOrDie(rc)
	for range n {
		if _, err := pcs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
			t.Fatal("the kube-apiserver pod accepted a token signed with a key it does not have")
		}
	}
}

// waitPodLog waits until the pod's log (read through the apiserver from the kubelet) holds text.
func waitPodLog(ctx context.Context, t *testing.T, cs kubernetes.Interface, pod, text string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		raw, err := cs.CoreV1().Pods("kube-system").GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(ctx)
		if i := bytes.Index(raw, []byte(text)); err == nil && i >= 0 {
			start := bytes.LastIndexByte(raw[:i], '\n') + 1
			line, _, _ := bytes.Cut(raw[start:], []byte("\n"))
			t.Logf("kube-system/%s logged: %s", pod, line)
			return
		}
		last = fmt.Sprint(err, " ", tailLines(string(raw), 5))
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log of kube-system/%s after 60 s: %s", text, pod, last)
		}
	}
}

// podDiagnosis is the pod's container states and the last lines of its current or previous log.
func podDiagnosis(ctx context.Context, cs kubernetes.Interface, node lab.NodeStatus, name string) string {
	p, err := cs.CoreV1().Pods("kube-system").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, st := range p.Status.ContainerStatuses {
		fmt.Fprintf(&b, "%s: restarts %d, state %+v, last %+v\n", st.Name, st.RestartCount, st.State, st.LastTerminationState)
	}
	files, _ := filepath.Glob(filepath.Join(node.Dir, "pod-logs", "kube-system_"+name+"_*", "*", "*.log"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		fmt.Fprintf(&b, "%s (err %v):\n%s\n", f, err, tailLines(string(raw), 20))
	}
	for _, prev := range []bool{false, true} {
		raw, err := cs.CoreV1().Pods("kube-system").GetLogs(name, &corev1.PodLogOptions{Previous: prev}).DoRaw(ctx)
		fmt.Fprintf(&b, "log (previous %v, err %v):\n%s\n", prev, err, tailLines(string(raw), 20))
	}
	return b.String()
}

func tailLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// runLogsCluster runs `credwatch logs --from-cluster --controllers -o json` against the lab.
func runLogsCluster(ctx context.Context, t *testing.T, kubeconfig string) logsReport {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := cmdlogs.NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"--kubeconfig", kubeconfig, "--from-cluster", "--controllers", "--fail-on", "none", "-o", "json"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("logs --from-cluster --controllers: %v\n%s", err, errOut.String())
	}
	var rep logsReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("logs json: %v\n%s", err, out.String())
	}
	return rep
}

// logsReport is the part of the logs JSON document the test reads.
type logsReport struct {
	Inputs   []logsInput   `json:"inputs"`
	Failures []logsFailure `json:"failures"`
}

type logsInput struct {
	Name  string `json:"name"`
	Host  string `json:"host"`
	Lines int64  `json:"lines"`
	Read  bool   `json:"read"`
}

type logsFailure struct {
	Host      string `json:"host"`
	Component string `json:"component"`
	Cause     string `json:"cause"`
	Count     int    `json:"count"`
}

// assert checks that both pods' logs were read from node and that the causes they hold were
// named: the tokens the lab's members minted, presented to the drifted kube-apiserver pod
// (signing-key-unknown, once per request), and the controller manager told Unauthorized.
func (r logsReport) assert(t *testing.T, node string) {
	t.Helper()
	for _, name := range []string{"kube-apiserver-" + node + "/kube-apiserver", "kube-controller-manager-" + node + "/kube-controller-manager"} {
		if !slices.ContainsFunc(r.Inputs, func(in logsInput) bool { return in.Name == name && in.Read && in.Lines > 0 }) {
			t.Errorf("the log of %s was not read: %+v", name, r.Inputs)
		}
	}
	for _, want := range []struct {
		component, cause string
		min              int
	}{{"apiserver", "signing-key-unknown", 3}, {"controller-manager", "client-unauthorized", 1}} {
		if !slices.ContainsFunc(r.Failures, func(f logsFailure) bool {
			return f.Host == node && f.Component == want.component && f.Cause == want.cause && f.Count >= want.min
		}) {
			t.Errorf("no %s × ≥%d from %s on %s in %+v", want.cause, want.min, want.component, node, r.Failures)
		}
	}
}

// writeSAKey writes a new RSA service-account key pair into dir.
func writeSAKey(t *testing.T, dir string) (keyFile, pubFile string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	keyFile, pubFile = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		t.Fatal(err)
	}
	return keyFile, pubFile
}
