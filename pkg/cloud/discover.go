// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Consumer is a component that uses a credential, and whether it picks up a change by itself.
type Consumer struct {
	Component string     `json:"component"`
	Pod       string     `json:"pod,omitempty"`
	Node      string     `json:"node,omitempty"`
	Started   *time.Time `json:"started,omitempty"`
	// How it reads the credential, in words.
	How string `json:"how"`
	// Rereads: it fetches the credential again by itself (vSphere, from a Secret, on the next failed login).
	Rereads bool `json:"rereads"`
	// Stale: it does not re-read and started before the credential last changed.
	Stale   bool   `json:"stale"`
	Restart string `json:"restart,omitempty"`
	// PID is a host process's (a kubelet, or a component systemd runs).
	PID int `json:"pid,omitempty"`
	// Looping: a kubelet that restarts in a loop (Restarts starts in kubelet.LoopWindow): it
	// reads the credential again at each start, and exits at start-up.
	Looping  bool `json:"looping,omitempty"`
	Restarts int  `json:"restarts,omitempty"`
}

// Ref names where c runs: its Pod ("namespace/pod"), or its host process ("pid N").
func (c Consumer) Ref() string {
	if c.Pod == "" && c.PID != 0 {
		return fmt.Sprintf("pid %d", c.PID)
	}
	return c.Pod
}

// Item is one credential with its consumers and, after Test, its verdict.
type Item struct {
	Credential
	Consumers []Consumer `json:"consumers,omitempty"`
	Test      TestResult `json:"test"`
	// Action is what to do about this credential's consumers: "restart ..." or "nothing to do".
	Action string `json:"action"`
}

// Problem is a per-input failure: a malformed config, a named Secret that does not exist.
type Problem struct {
	Input   string `json:"input"`
	Message string `json:"message"`
}

// Inventory is every credential found, where, and who consumes it.
type Inventory struct {
	Items      []Item      `json:"credentials"`
	Components []Component `json:"components,omitempty"`
	Problems   []Problem   `json:"problems,omitempty"`
	Notes      []string    `json:"notes,omitempty"`
	// Partial: some cluster reads failed (not "not found"); the inventory may be incomplete.
	Partial bool     `json:"partial,omitempty"`
	Errors  []string `json:"errors,omitempty"`
}

// DiscoverOptions say where to look.
type DiscoverOptions struct {
	// Local are configs read with --config; a control-plane Pod whose --cloud-config is a hostPath
	// with the same path is matched to them.
	Local []*Config
	// Namespaces to search for consumers and well-known objects (default kube-system and vmware-system-csi).
	Namespaces []string
	// Timeout bounds each API call (default 10 s).
	Timeout time.Duration
	// Processes, when set, lists this host's processes that read a --cloud-config
	// (HostProcesses("/proc")); those reading a Local config are its consumers.
	Processes ProcessReader
	// LoopWait bounds how long Processes is read again for a kubelet the cluster shows
	// restarting in a loop, until it has started again (0: not at all).
	LoopWait time.Duration
	// Progress, when set, is told of a wait.
	Progress func(format string, args ...any)
}

// WellKnown are the Secrets and ConfigMaps the vSphere/OpenStack CPI and CSI drivers are usually
// installed with.
var WellKnown = []Source{
	{Kind: SourceSecret, Namespace: "kube-system", Name: "vsphere-cloud-secret"},
	{Kind: SourceSecret, Namespace: "vmware-system-csi", Name: "vsphere-config-secret"},
	{Kind: SourceSecret, Namespace: "kube-system", Name: "vsphere-config-secret"},
	{Kind: SourceSecret, Namespace: "kube-system", Name: "cloud-config"},
	{Kind: SourceSecret, Namespace: "kube-system", Name: "openstack-cloud-config"},
	{Kind: SourceConfigMap, Namespace: "kube-system", Name: "vsphere-cloud-config"},
	{Kind: SourceConfigMap, Namespace: "kube-system", Name: "cloud-config"},
	{Kind: SourceConfigMap, Namespace: "kube-system", Name: "csi-vsphere-config"},
	{Kind: SourceConfigMap, Namespace: "vmware-system-csi", Name: "csi-vsphere-config"},
}

type discoverer struct {
	cs      kubernetes.Interface
	o       DiscoverOptions
	inv     *Inventory
	seen    map[string]bool // sources already read (kind/ns/name/key)
	objects map[string]*object
}

type object struct {
	data    map[string][]byte
	changed time.Time
}

// Discover finds the cloud credentials in the local configs and, when cs is not nil, in the
// cluster, with their consumers. Per-input failures become Problems; failed cluster reads mark
// the inventory Partial; everything else is still read.
func Discover(ctx context.Context, cs kubernetes.Interface, o DiscoverOptions) *Inventory {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if len(o.Namespaces) == 0 {
		o.Namespaces = []string{"kube-system", "vmware-system-csi"}
	}
	d := &discoverer{cs: cs, o: o, inv: &Inventory{}, seen: map[string]bool{}, objects: map[string]*object{}}
	localConsumers := map[*Config][]Consumer{}
	if cs != nil {
		d.components(ctx)
	}
	// Configs named by control-plane flags.
	var clusterCfgs []*Config
	cfgConsumers := map[*Config][]Consumer{}
	for _, c := range d.inv.Components {
		if c.CloudConfig == "" {
			continue
		}
		src, ok := mountSource(c.pod, c.container, c.CloudConfig)
		cons := consumerOf(c, fmt.Sprintf("--cloud-config %s, parsed once at start-up", c.CloudConfig), false)
		switch {
		case !ok:
			d.inv.Notes = append(d.inv.Notes, fmt.Sprintf("%s %s: --cloud-config %s is not on a volume credwatch can see", c.Kind, c.Ref(), c.CloudConfig))
		case src.Kind == SourceNodeFile:
			matched := false
			for _, l := range o.Local {
				if l.Source.Path == src.Path {
					localConsumers[l] = append(localConsumers[l], cons)
					matched = true
				}
			}
			if !matched {
				d.inv.Notes = append(d.inv.Notes, fmt.Sprintf("%s %s reads --cloud-config from node %s file %s (hostPath): run `credwatch cloud --config %s` on that node to test it",
					c.Kind, c.Ref(), c.Node, src.Path, src.Path))
			}
			if c.CloudProvider != "" && c.CloudProvider != "external" && c.Kind == KubeControllerManager {
				kl := Consumer{Component: Kubelet, How: fmt.Sprintf("in-tree --cloud-provider=%s: kubelets read their own --cloud-config file once at start-up", c.CloudProvider),
					Restart: Component{Kind: Kubelet}.RestartCommand()}
				for _, l := range o.Local {
					if l.Source.Path == src.Path {
						localConsumers[l] = append(localConsumers[l], kl)
					}
				}
			}
		default:
			cfg, err := d.readConfig(ctx, src)
			if err != nil {
				d.problem(src.String(), err)
				continue
			}
			if cfg != nil {
				clusterCfgs = append(clusterCfgs, cfg)
				cfgConsumers[cfg] = append(cfgConsumers[cfg], cons)
			}
		}
	}
	if len(o.Local) > 0 && o.Processes != nil {
		d.hostConsumers(ctx, localConsumers)
	}
	if cs != nil {
		for _, w := range WellKnown {
			d.wellKnown(ctx, w, &clusterCfgs, cfgConsumers)
		}
	}
	for _, l := range o.Local {
		cons := localConsumers[l]
		if len(cons) == 0 {
			cons = []Consumer{{Component: "unknown", How: "not matched to a running Pod: whatever reads this file (kube-apiserver, kube-controller-manager, kubelet with --cloud-config, a CCM) reads it once at start-up"}}
		}
		d.addConfig(ctx, l, cons)
	}
	for _, cfg := range clusterCfgs {
		d.addConfig(ctx, cfg, cfgConsumers[cfg])
	}
	for i := range d.inv.Items {
		d.inv.Items[i].judgeStaleness()
	}
	return d.inv
}

func consumerOf(c Component, how string, rereads bool) Consumer {
	cons := Consumer{Component: c.Kind, Pod: c.Ref(), Node: c.Node, How: how, Rereads: rereads, Restart: c.RestartCommand()}
	if !c.Started.IsZero() {
		t := c.Started
		cons.Started = &t
	}
	return cons
}

func (d *discoverer) problem(input string, err error) {
	d.inv.Problems = append(d.inv.Problems, Problem{Input: input, Message: err.Error()})
}

func (d *discoverer) partial(err error) {
	d.inv.Partial = true
	d.inv.Errors = append(d.inv.Errors, err.Error())
}

func (d *discoverer) components(ctx context.Context) {
	for _, ns := range d.o.Namespaces {
		pods, err := listPods(ctx, d.cs, ns, d.o.Timeout, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			d.partial(fmt.Errorf("list pods in %s: %w", ns, err))
			continue
		}
		for i := range pods {
			d.inv.Components = append(d.inv.Components, componentsOf(&pods[i])...)
		}
	}
	sort.SliceStable(d.inv.Components, func(i, j int) bool { return d.inv.Components[i].Ref() < d.inv.Components[j].Ref() })
}

// get reads a Secret or ConfigMap once; nil, nil when it does not exist.
func (d *discoverer) get(ctx context.Context, src Source) (*object, error) {
	key := string(src.Kind) + "/" + src.Namespace + "/" + src.Name
	if o, ok := d.objects[key]; ok {
		return o, nil
	}
	cctx, cancel := context.WithTimeout(ctx, d.o.Timeout)
	defer cancel()
	var o *object
	var meta metav1.ObjectMeta
	switch src.Kind {
	case SourceSecret:
		s, err := d.cs.CoreV1().Secrets(src.Namespace).Get(cctx, src.Name, metav1.GetOptions{})
		if err != nil {
			return nil, notFoundNil(err, src)
		}
		o, meta = &object{data: s.Data}, s.ObjectMeta
		for k, v := range s.StringData {
			o.data[k] = []byte(v)
		}
	case SourceConfigMap:
		c, err := d.cs.CoreV1().ConfigMaps(src.Namespace).Get(cctx, src.Name, metav1.GetOptions{})
		if err != nil {
			return nil, notFoundNil(err, src)
		}
		o, meta = &object{data: map[string][]byte{}}, c.ObjectMeta
		for k, v := range c.Data {
			o.data[k] = []byte(v)
		}
	default:
		return nil, fmt.Errorf("%s: not a cluster object", src)
	}
	o.changed = LastChanged(meta)
	d.objects[key] = o
	return o, nil
}

var errNotFound = errors.New("not found")

func notFoundNil(err error, src Source) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %s/%s: %w", src.Kind, src.Namespace, src.Name, errNotFound)
	}
	return fmt.Errorf("get %s %s/%s: %w", src.Kind, src.Namespace, src.Name, err)
}

// LastChanged is the time of an object's last write: the newest managedFields entry, else its creation.
func LastChanged(m metav1.ObjectMeta) time.Time {
	t := m.CreationTimestamp.Time
	for _, f := range m.ManagedFields {
		if f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	return t
}

// readConfig reads one config key from a Secret or ConfigMap.
func (d *discoverer) readConfig(ctx context.Context, src Source) (*Config, error) {
	o, err := d.get(ctx, src)
	if err != nil {
		if !errors.Is(err, errNotFound) {
			d.partial(err)
		}
		return nil, err
	}
	d.seen[src.String()] = true
	data, ok := o.data[src.Key]
	if !ok {
		return nil, fmt.Errorf("%s: no key %q", src, src.Key)
	}
	src.Changed = &o.changed
	return Parse(data, src)
}
