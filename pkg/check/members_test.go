// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestCredentialFlags(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want map[string][]string
	}{
		{"equals and repeated", []string{"kube-apiserver", "--service-account-issuer=https://a", "--service-account-issuer=https://b", "--tls-cert-file=x"},
			map[string][]string{"service-account-issuer": {"https://a", "https://b"}}},
		{"space separated", []string{"--secure-port", "6443", "--advertise-address", "10.0.0.1"},
			map[string][]string{"secure-port": {"6443"}, "advertise-address": {"10.0.0.1"}}},
		{"list flag", []string{"--api-audiences=a, b,,c"}, map[string][]string{"api-audiences": {"a", "b", "c"}}},
		{"bool without value", []string{"--service-account-extend-token-expiration", "--secure-port=1"},
			map[string][]string{"service-account-extend-token-expiration": {"true"}, "secure-port": {"1"}}},
		{"nothing", []string{"etcd", "-x"}, map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := credentialFlagsOf(tt.argv); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNormalizeEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.1": "https://10.0.0.1:6443", "10.0.0.1:443": "https://10.0.0.1:443",
		"https://cp.example:6443/": "https://cp.example:6443", "[::1]": "https://[::1]:6443",
	} {
		if got, err := NormalizeEndpoint(in); err != nil || got != want {
			t.Errorf("NormalizeEndpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "http://x", "https://", "10.0.0.1:0", "10.0.0.1:65536", "10.0.0.1:99999999999999999999", "https://10.0.0.1:", "[::1]:70000"} {
		if _, err := NormalizeEndpoint(bad); err == nil {
			t.Errorf("NormalizeEndpoint(%q): no error", bad)
		}
	}
}

func TestDiscoverMembers(t *testing.T) {
	port, name := int32(6443), "https"
	cs := fake.NewClientset(
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default",
			Labels: map[string]string{"kubernetes.io/service-name": "kubernetes"}},
			Ports:     []discoveryv1.EndpointPort{{Name: &name, Port: &port}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}, {Addresses: []string{"10.0.0.2"}}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "kube-apiserver-cp1", Namespace: "kube-system",
			Labels: map[string]string{"component": "kube-apiserver"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-apiserver",
				Command: []string{"kube-apiserver", "--advertise-address=10.0.0.1", "--secure-port=6443",
					"--service-account-issuer=https://kubernetes.default.svc.cluster.local", "--api-audiences=a,b"}}}}},
	)
	var sp, es candidates
	if err := fromStaticPods(context.Background(), cs, &sp); err != nil {
		t.Fatal(err)
	}
	if err := fromEndpointSlices(context.Background(), cs, &es); err != nil {
		t.Fatal(err)
	}
	if got := sp.list(); len(got) != 1 || got[0].url != "https://10.0.0.1:6443" || got[0].staticPod != "kube-system/kube-apiserver-cp1" ||
		!reflect.DeepEqual(got[0].flags["api-audiences"], []string{"a", "b"}) {
		t.Errorf("static pods: %+v", got)
	}
	if got := es.list(); len(got) != 2 || got[1].url != "https://10.0.0.2:6443" {
		t.Errorf("endpointslices: %+v", got)
	}
}

func TestMemberCandidates(t *testing.T) {
	var sp, none candidates
	sp.add("https://10.0.0.1:6443", "static-pod")
	prior := map[string]string{"https://10.0.0.2:6443": "kube-apiserver-b", "https://10.0.0.1:6443": "kube-apiserver-a", "https://10.0.0.9:6443": "10.0.0.9:6443"}
	const lb = "https://10.0.0.9:6443"
	tests := []struct {
		name    string
		sp      candidates
		failed  bool
		prior   map[string]string
		want    []string
		foundBy string
	}{
		{"discovered", sp, false, prior, []string{"https://10.0.0.1:6443"}, "static-pod"},
		{"nothing found, discovery answered", none, false, prior, []string{lb}, "kubeconfig-server"},
		{"discovery failed, first interval", none, true, nil, []string{lb}, "kubeconfig-server"},
		// The last interval's members, not the load balancer it fell back to before.
		{"discovery failed, members known", none, true, prior, []string{"https://10.0.0.1:6443", "https://10.0.0.2:6443"}, "last-interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := memberCandidates(tt.sp, none, nil, tt.failed, tt.prior, lb)
			if err != nil {
				t.Fatal(err)
			}
			var urls []string
			for _, c := range got.list() {
				urls = append(urls, c.url)
				if !slices.Contains(c.foundBy, tt.foundBy) {
					t.Errorf("%s found by %v, want %s", c.url, c.foundBy, tt.foundBy)
				}
			}
			if !slices.Equal(urls, tt.want) {
				t.Errorf("candidates = %v, want %v", urls, tt.want)
			}
		})
	}
	if _, err := memberCandidates(none, none, nil, true, nil, "::bad"); err == nil || !strings.Contains(err.Error(), "not usable") {
		t.Errorf("unusable server: err = %v", err)
	}
}

// TestNameMembers: a member keeps the name it had in the last interval when it cannot say its
// own — found again by its address, behind kubeadm's certificate (CommonName kube-apiserver) —
// and never over a name it gives itself.
func TestNameMembers(t *testing.T) {
	const u1, u2 = "https://10.0.0.1:6443", "https://10.0.0.2:6443"
	known := map[string]string{u1: "kube-apiserver-cp-1", u2: "kube-apiserver-cp-2"}
	tests := []struct {
		name string
		m    Member
		want string
	}{
		{"kubeadm certificate, found by last interval", Member{Endpoint: Endpoint{URL: u1, FoundBy: []string{"last-interval"}}, ServedBy: "kube-apiserver"}, "kube-apiserver-cp-1"},
		{"no certificate name", Member{Endpoint: Endpoint{URL: u1, FoundBy: []string{"endpointslice"}}}, "kube-apiserver-cp-1"},
		{"its static pod", Member{Endpoint: Endpoint{URL: u1, StaticPod: "kube-system/kube-apiserver-cp-9"}}, "kube-apiserver-cp-9"},
		{"a certificate that names it", Member{Endpoint: Endpoint{URL: u2}, ServedBy: "cp-2.example"}, "cp-2.example"},
		{"unknown before", Member{Endpoint: Endpoint{URL: "https://10.0.0.3:6443"}, ServedBy: "kube-apiserver"}, "10.0.0.3:6443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := []Member{tt.m}
			nameMembers(ms, known)
			if ms[0].Name != tt.want {
				t.Errorf("name %q, want %q", ms[0].Name, tt.want)
			}
		})
	}
}
