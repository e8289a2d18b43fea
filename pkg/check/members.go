// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/cmdline"
)

// credentialFlags are the kube-apiserver flags the check reads from static-pod command lines.
var credentialFlags = map[string]bool{
	"service-account-issuer": true, "service-account-key-file": true, "service-account-signing-key-file": true,
	"api-audiences": true, "service-account-max-token-expiration": true,
	"service-account-extend-token-expiration": true, "service-account-jwks-uri": true,
	"advertise-address": true, "secure-port": true, "bind-address": true, "service-account-lookup": true,
	"etcd-servers": true, "service-account-signing-endpoint": true,
}

// credentialFlagsOf keeps the credential-related kube-apiserver flags of a command line: every
// value in order; list flags (api-audiences, etcd-servers) split on commas.
func credentialFlagsOf(argv []string) map[string][]string {
	all := cmdline.Parse(argv)
	out := map[string][]string{}
	for name := range all {
		switch {
		case !credentialFlags[name]:
		case name == "api-audiences" || name == "etcd-servers":
			if l := all.List(name); len(l) > 0 {
				out[name] = l
			}
		default:
			out[name] = all[name]
		}
	}
	return out
}

// candidate is a member before it was asked anything.
type candidate struct {
	url       string
	foundBy   []string
	staticPod string
	flags     map[string][]string
}

type candidates struct {
	byURL map[string]*candidate
	order []string
}

func (cs *candidates) add(url, how string) *candidate {
	if cs.byURL == nil {
		cs.byURL = map[string]*candidate{}
	}
	c, ok := cs.byURL[url]
	if !ok {
		c = &candidate{url: url}
		cs.byURL[url] = c
		cs.order = append(cs.order, url)
	}
	for _, h := range c.foundBy {
		if h == how {
			return c
		}
	}
	c.foundBy = append(c.foundBy, how)
	return c
}

func (cs *candidates) list() []*candidate {
	out := make([]*candidate, 0, len(cs.order))
	for _, u := range cs.order {
		out = append(out, cs.byURL[u])
	}
	return out
}

func hostPortURL(host string, port int) string {
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// fromEndpointSlices adds the addresses of default/kubernetes.
// memberCandidates are the member URLs to probe: the static pods' first (they carry names and
// flags), then the EndpointSlice's, then the endpoints named by hand. When discovery failed
// altogether (both lists, e.g. through a load balancer that sent them to a member without
// storage) and an earlier fetch knew members (prior: URL -> name, from watch's last interval),
// those are probed again, found by "last-interval": falling back to the kubeconfig's server
// alone would make every member vanish for one interval and come back in the next. Only when
// nothing else is known is the kubeconfig's server probed.
func memberCandidates(sp, es candidates, endpoints []string, discoveryFailed bool, prior map[string]string, server string) (candidates, error) {
	var cands candidates
	for _, c := range sp.list() {
		n := cands.add(c.url, "static-pod")
		n.staticPod, n.flags = c.staticPod, c.flags
	}
	for _, c := range es.list() {
		cands.add(c.url, "endpointslice")
	}
	for _, e := range endpoints {
		u, _ := NormalizeEndpoint(e) // validated in defaults
		cands.add(u, "flag")
	}
	if len(cands.order) > 0 {
		return cands, nil
	}
	serverURL, serverErr := NormalizeEndpoint(server)
	if discoveryFailed {
		for _, u := range slices.Sorted(maps.Keys(prior)) {
			if u != serverURL {
				cands.add(u, "last-interval")
			}
		}
		if len(cands.order) > 0 {
			return cands, nil
		}
	}
	if serverErr != nil {
		return cands, fmt.Errorf("no members found and the kubeconfig server %q is not usable: %w", server, serverErr)
	}
	cands.add(serverURL, "kubeconfig-server")
	return cands, nil
}

func fromEndpointSlices(ctx context.Context, client kubernetes.Interface, cs *candidates) error {
	list, err := client.DiscoveryV1().EndpointSlices("default").List(ctx,
		metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=kubernetes"})
	if err != nil {
		return fmt.Errorf("list EndpointSlices of default/kubernetes: %w", err)
	}
	for _, s := range list.Items {
		port := 6443
		for _, p := range s.Ports {
			if p.Port != nil && (p.Name == nil || *p.Name == "https" || len(s.Ports) == 1) {
				port = int(*p.Port)
			}
		}
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				cs.add(hostPortURL(a, port), "endpointslice")
			}
		}
	}
	return nil
}

// fromStaticPods adds kube-system pods labelled component=kube-apiserver with their flags.
func fromStaticPods(ctx context.Context, client kubernetes.Interface, cs *candidates) error {
	list, err := client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=kube-apiserver"})
	if err != nil {
		return fmt.Errorf("list kube-system pods component=kube-apiserver: %w", err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	for i := range list.Items {
		p := &list.Items[i]
		url, flags := staticPodMember(p)
		if url == "" {
			continue
		}
		c := cs.add(url, "static-pod")
		c.staticPod = "kube-system/" + p.Name
		c.flags = flags
	}
	return nil
}

// staticPodMember derives a member URL and its flags from a kube-apiserver pod.
func staticPodMember(p *corev1.Pod) (string, map[string][]string) {
	var argv []string
	for _, c := range p.Spec.Containers {
		if c.Name == "kube-apiserver" || len(p.Spec.Containers) == 1 {
			argv = append(append(argv, c.Command...), c.Args...)
		}
	}
	flags := credentialFlagsOf(argv)
	host := last(flags["advertise-address"])
	if host == "" {
		host = p.Status.PodIP
	}
	if host == "" {
		host = p.Status.HostIP
	}
	if host == "" {
		return "", flags
	}
	port := 6443
	if v, err := strconv.Atoi(last(flags["secure-port"])); err == nil && v > 0 {
		port = v
	}
	return hostPortURL(host, port), flags
}

func last(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}
