// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"fmt"
	"slices"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ContextConfig is the client configuration of one kubeconfig context.
type ContextConfig struct {
	Context string
	REST    *rest.Config
}

// ContextRESTConfigs loads the client configuration of every context of the kubeconfig (all), or
// of the contexts named, in that order. A name the kubeconfig lacks is a usage error.
func (k *KubeFlags) ContextRESTConfigs(names []string, all bool) ([]ContextConfig, error) {
	if err := k.Validate(); err != nil {
		return nil, err
	}
	loader := k.Config.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, Usage(fmt.Errorf("load kubeconfig: %w", err))
	}
	if all {
		names = names[:0:0]
		for name := range raw.Contexts {
			names = append(names, name)
		}
		slices.Sort(names)
		if len(names) == 0 {
			return nil, Usagef("--all-contexts: the kubeconfig has no contexts")
		}
	}
	out := make([]ContextConfig, 0, len(names))
	for _, name := range names {
		if _, ok := raw.Contexts[name]; !ok {
			return nil, Usagef("context %q: not in the kubeconfig", name)
		}
		cfg, err := clientcmd.NewNonInteractiveClientConfig(raw, name, &clientcmd.ConfigOverrides{}, loader.ConfigAccess()).ClientConfig()
		if err != nil {
			return nil, Usage(fmt.Errorf("context %q: %w", name, err))
		}
		if err := statReferenced(cfg); err != nil {
			return nil, err
		}
		out = append(out, ContextConfig{Context: name, REST: k.tune(cfg)})
	}
	return out, nil
}
