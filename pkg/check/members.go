package check

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// credentialFlags are the kube-apiserver flags the check reads from static-pod command lines.
var credentialFlags = map[string]bool{
	"service-account-issuer": true, "service-account-key-file": true, "service-account-signing-key-file": true,
	"api-audiences": true, "service-account-max-token-expiration": true,
	"service-account-extend-token-expiration": true, "service-account-jwks-uri": true,
	"advertise-address": true, "secure-port": true, "bind-address": true, "service-account-lookup": true,
	"etcd-servers": true, "service-account-signing-endpoint": true,
}

// ParseFlags reads --name=value and --name value pairs from a command line, keeping the
// credential-related kube-apiserver flags. Repeated flags keep every value in order; values of
// list flags (api-audiences) are split on commas.
func ParseFlags(argv []string) map[string][]string {
	out := map[string][]string{}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !credentialFlags[name] {
			continue
		}
		if !hasVal {
			if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "--") {
				val = argv[i+1]
				i++
			} else {
				val = "true"
			}
		}
		if name == "api-audiences" || name == "etcd-servers" {
			for _, v := range strings.Split(val, ",") {
				if v = strings.TrimSpace(v); v != "" {
					out[name] = append(out[name], v)
				}
			}
			continue
		}
		out[name] = append(out[name], val)
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
	flags := ParseFlags(argv)
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
