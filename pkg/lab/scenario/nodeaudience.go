// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/credwatch/credwatch/pkg/lab"
)

// Scenarios of the kubelet's service-account tokens for image pulls (KEP-4412;
// CredentialProviderLab) and the node audience restriction.

// CredentialProviderLab is a lab on lab.DefaultVersion with one node whose kubelet runs the lab's
// image credential provider (lab.Options.CredentialProvider) for images of
// lab.DefaultCredentialProviderImages.
type CredentialProviderLab struct{}

// String is "lab V, a node with an image credential provider".
func (CredentialProviderLab) String() string {
	return "lab " + lab.DefaultVersion + ", a node with an image credential provider"
}

// StartsOn is lab.DefaultVersion.
func (CredentialProviderLab) StartsOn() string { return lab.DefaultVersion }

// LabOptions are the lab options of the environment for a lab of members.
func (CredentialProviderLab) LabOptions(members int) lab.Options {
	return lab.Options{Version: lab.DefaultVersion, Members: members, Nodes: 1, CredentialProvider: &lab.CredentialProviderOptions{}}
}

// Run starts the lab, runs s.Run on it and stops it.
func (e CredentialProviderLab) Run(ctx context.Context, s Scenario, o RunOptions) (*Evidence, error) {
	if err := checkLine(s.Name, lab.DefaultVersion, o.Version); err != nil {
		return nil, err
	}
	return runOnLab(ctx, s, o, e.LabOptions(max(o.Members, s.Members, 2)))
}

// pullWait bounds how long the scenario waits for the kubelet to try a pull.
const pullWait = 90 * time.Second

// nodeAudienceDenied runs two pods whose images the node's credential provider matches: one
// whose spec names no volume with the provider's audience (NodeRestriction refuses the kubelet's
// TokenRequest for it), and one with a projected token volume for that audience (the kubelet gets
// the token and hands it to the provider). It also asks for such a token as the node itself.
func nodeAudienceDenied(ctx context.Context, env *Env) (*Evidence, error) {
	s, _ := Get("node-audience-denied")
	ev := env.evidence(s)
	o := env.Lab.Options().CredentialProvider
	nodes := env.Lab.Nodes()
	if o == nil || len(nodes) == 0 {
		return nil, errors.New("node-audience-denied needs a node with the lab's image credential provider (lab.Options.CredentialProvider)")
	}
	node := nodes[0]
	cs, err := kubernetes.NewForConfig(env.Lab.RESTConfig())
	if err != nil {
		return nil, err
	}
	ns := s.Name
	if err := setupPuller(ctx, cs, ns); err != nil {
		return nil, err
	}
	defer func() {
		_ = cs.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns, metav1.DeleteOptions{})
	}()
	// The kubelet hands the provider the image without its tag: one repository per pod.
	repo := func(pod string) string { return o.MatchImages[0] + "/lab/" + pod }

	// 1. No volume names the audience: the kubelet may not request the token.
	p := env.begin("a pod whose spec names no volume for audience " + o.Audience)
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, pullPod("no-volume", node.Name, repo("no-volume")+":1", ""), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod no-volume: %w", err)
	}
	kubelet := node.Name + "/kubelet"
	line, err := env.waitLogLine(ctx, kubelet, pullWait, "Failed to provide credentials for image")
	if err != nil {
		return nil, err
	}
	p.measured["kubelet"] = line
	p.measured["credwatch logs cause"] = logsCause(node.Name, line)
	p.measured["pod events"] = podEvents(ctx, cs, ns, "no-volume")
	p.probe(env.nodeTokenRequest(ctx, node, ns, pod, o.Audience, http.StatusForbidden))
	p.measured["provider requests"] = fmt.Sprint(len(providerRequests(env.Lab.CredentialProviderLog(node.Name), repo("no-volume"))))
	ev.Phases = append(ev.Phases, p.end())

	// 2. A projected volume names the audience: the kubelet gets the token for the provider.
	p = env.begin("a pod with a projected token volume for audience " + o.Audience)
	pod, err = cs.CoreV1().Pods(ns).Create(ctx, pullPod("with-volume", node.Name, repo("with-volume")+":1", o.Audience), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod with-volume: %w", err)
	}
	req, err := waitFor(ctx, pullWait, func() string {
		if reqs := providerRequests(env.Lab.CredentialProviderLog(node.Name), repo("with-volume")); len(reqs) > 0 {
			return reqs[0]
		}
		return ""
	})
	if err != nil {
		return nil, fmt.Errorf("the credential provider of %s had no request for %s: %w; kubelet log:\n%s", node.Name, repo("with-volume"), err, env.Lab.LogTail(kubelet, 20))
	}
	p.measured["provider request"] = req
	p.measured["pod events"] = podEvents(ctx, cs, ns, "with-volume")
	p.probe(env.nodeTokenRequest(ctx, node, ns, pod, o.Audience, http.StatusCreated))
	ev.Phases = append(ev.Phases, p.end())
	return finish(ev), nil
}

// setupPuller creates namespace ns and its service account "puller".
func setupPuller(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "puller"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/puller: %w", ns, err)
	}
	return nil
}

// pullPod is a pod of service account "puller" on node that always pulls image; with audience,
// it has a projected service-account token volume for it.
func pullPod(name, node, image, audience string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName: node, ServiceAccountName: "puller", RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "app", Image: image, ImagePullPolicy: corev1.PullAlways}},
		},
	}
	if audience != "" {
		pod.Spec.Volumes = []corev1.Volume{{Name: "registry-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: audience, ExpirationSeconds: ptr.To[int64](3600), Path: "token"}}},
		}}}}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "registry-token", MountPath: "/var/run/secrets/registry"}}
	}
	return pod
}

// nodeTokenRequest asks, as the node's kubelet does (its own client certificate), for a token of
// pod's service account with audience, bound to pod.
func (e *Env) nodeTokenRequest(ctx context.Context, node lab.NodeStatus, ns string, pod *corev1.Pod, audience string, expect int) Probe {
	pr := Probe{Name: fmt.Sprintf("TokenRequest by system:node:%s for %s/%s, audience %s", node.Name, ns, pod.Spec.ServiceAccountName, audience),
		MintedBy: "system:node:" + node.Name, PresentedTo: "load balancer", Expect: expect}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(node.Dir, "kubelet.kubeconfig"))
	if err != nil {
		pr.Error = err.Error()
		return pr
	}
	cfg.Host, cfg.Timeout = "https://"+e.Lab.LBAddress(), 10*time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		pr.Error = err.Error()
		return pr
	}
	t0 := time.Now()
	_, err = cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, pod.Spec.ServiceAccountName, &authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{
		Audiences: []string{audience}, ExpirationSeconds: ptr.To[int64](600),
		BoundObjectRef: &authnv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}, metav1.CreateOptions{})
	pr.Duration = time.Since(t0).Round(time.Millisecond).String()
	var st apierrors.APIStatus
	switch {
	case err == nil:
		pr.Status = http.StatusCreated
	case errors.As(err, &st):
		pr.Status, pr.Error = int(st.Status().Code), err.Error()
	default:
		pr.Error = err.Error()
	}
	return pr
}

// waitLogLine waits up to within for a line of log name (lab.Lab.MemberLog) containing want and
// returns it.
func (e *Env) waitLogLine(ctx context.Context, name string, within time.Duration, want string) (string, error) {
	line, err := waitFor(ctx, within, func() string {
		if lines := e.memberLines(name, func(l string) bool { return strings.Contains(l, want) }); len(lines) > 0 {
			return lines[0]
		}
		return ""
	})
	if err != nil {
		return "", fmt.Errorf("%s logged no %q: %w; its last lines:\n%s", name, want, err, e.Lab.LogTail(name, 20))
	}
	return line, nil
}

// waitFor calls get every second until it returns something, for up to within.
func waitFor(ctx context.Context, within time.Duration, get func() string) (string, error) {
	deadline := time.Now().Add(within)
	for {
		if v := get(); v != "" {
			return v, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("nothing within %s", within)
		}
		if err := sleep(ctx, time.Second); err != nil {
			return "", err
		}
	}
}

// podEvents are the reasons and messages of pod ns/name's events, "; "-joined.
func podEvents(ctx context.Context, cs kubernetes.Interface, ns, name string) string {
	evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return "error: " + err.Error()
	}
	var out []string
	for _, e := range evs.Items {
		out = append(out, e.Reason+": "+e.Message)
	}
	return strings.Join(out, "; ")
}

// providerRequests are the credential provider's log lines (claims only) for image (a
// repository: the kubelet leaves the tag out).
func providerRequests(file, image string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, `"image":"`+image+`"`) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}
