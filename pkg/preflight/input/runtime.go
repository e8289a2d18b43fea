// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"slices"
	"strconv"
	"strings"
)

// Extension is a Cluster API runtime ExtensionConfig (runtime.cluster.x-k8s.io v1alpha1 or
// v1beta2): the hooks its handlers serve, as the core manager discovered them
// (status.handlers[].requestHook.hook).
type Extension struct {
	Object
	Hooks []string
}

// Serves says whether the extension has a handler for hook.
func (e Extension) Serves(hook string) bool { return slices.Contains(e.Hooks, hook) }

func parseExtensionConfig(s *Set, obj Object, _ header, doc []byte) error {
	var x struct {
		Status struct {
			Handlers []struct {
				RequestHook struct {
					Hook string `json:"hook"`
				} `json:"requestHook"`
			} `json:"handlers"`
		} `json:"status"`
	}
	if err := unmarshal(doc, &x); err != nil {
		return err
	}
	e := Extension{Object: obj}
	for _, h := range x.Status.Handlers {
		if h.RequestHook.Hook != "" && !slices.Contains(e.Hooks, h.RequestHook.Hook) {
			e.Hooks = append(e.Hooks, h.RequestHook.Hook)
		}
	}
	s.Extensions = append(s.Extensions, e)
	return nil
}

// ProviderLabel is the label clusterctl puts on a provider's objects, its manager Deployment
// among them: control-plane-kubeadm for KubeadmControlPlane's.
const ProviderLabel = "cluster.x-k8s.io/provider"

// Manager is a Cluster API provider's manager Deployment (labelled cluster.x-k8s.io/provider):
// the feature gates its containers' --feature-gates set. Other Deployments are ignored.
type Manager struct {
	Object
	Provider string
	// Gates are the gates --feature-gates names, with their values; a gate it does not name has
	// the release's default.
	Gates map[string]bool
}

func parseDeployment(s *Set, obj Object, h header, doc []byte) error {
	provider := h.Metadata.Labels[ProviderLabel]
	if provider == "" {
		s.Ignored = append(s.Ignored, obj)
		return nil
	}
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args    []string `json:"args"`
						Command []string `json:"command"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := unmarshal(doc, &d); err != nil {
		return err
	}
	m := Manager{Object: obj, Provider: provider, Gates: map[string]bool{}}
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, v := range flagValues(slices.Concat(c.Command, c.Args), "--feature-gates") {
			for _, kv := range strings.Split(v, ",") {
				k, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
				if b, err := strconv.ParseBool(strings.TrimSpace(val)); ok && err == nil && k != "" {
					m.Gates[k] = b
				}
			}
		}
	}
	s.Managers = append(s.Managers, m)
	return nil
}

// flagValues are the values of flag in args, as --flag=V or --flag V.
func flagValues(args []string, flag string) []string {
	var out []string
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, flag+"="):
			out = append(out, strings.TrimPrefix(a, flag+"="))
		case a == flag && i+1 < len(args):
			out = append(out, args[i+1])
		}
	}
	return out
}
