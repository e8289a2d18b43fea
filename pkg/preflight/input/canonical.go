// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// argLists are the keys of a kubeadmConfigSpec whose value is a map in Cluster API v1beta1 and a
// list of {name, value} in v1beta2 (apiServer, controllerManager, scheduler, etcd.local extraArgs;
// nodeRegistration.kubeletExtraArgs).
func isArgList(key string) bool { return key == "extraArgs" || key == "kubeletExtraArgs" }

// canonicalSpec is a kubeadmConfigSpec in one form for both Cluster API versions, so that the
// same spec written as v1beta1 and as v1beta2 compares equal and a real difference still shows:
// every extraArgs map becomes the list Cluster API's own conversion makes of it, sorted by name
// then value (ConvertToArgs, cluster-api@v1.14.0 api/bootstrap/kubeadm/v1beta2/conversion.go),
// and empty objects, empty lists and nulls are dropped, as v1beta2's omitempty/omitzero fields
// drop them. A list stays in its order: kubeadm passes it in that order. v1beta1's timeouts move
// where Cluster API's conversion moves them (moveTimeouts).
func canonicalSpec(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("malformed: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		moveTimeouts(m)
	}
	v, _ = canonical(v, "")
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// canonical rewrites v, found under key; empty says it is to be dropped.
func canonical(v any, key string) (out any, empty bool) {
	switch t := v.(type) {
	case nil:
		return nil, true
	case map[string]any:
		if isArgList(key) {
			return canonical(argList(t), "")
		}
		for k, e := range t {
			c, drop := canonical(e, k)
			if drop {
				delete(t, k)
				continue
			}
			t[k] = c
		}
		return t, len(t) == 0
	case []any:
		for i, e := range t {
			t[i], _ = canonical(e, "")
		}
		return t, len(t) == 0
	}
	return v, false
}

// argList is ConvertToArgs of a map of flags; a value that is not a string is kept as it is.
func argList(m map[string]any) []any {
	out := make([]any, 0, len(m))
	for _, n := range slices.Sorted(maps.Keys(m)) {
		out = append(out, map[string]any{"name": n, "value": m[n]})
	}
	return out
}

// moveTimeouts moves v1beta1's clusterConfiguration.apiServer.timeoutForControlPlane and
// joinConfiguration.discovery.timeout (durations) to v1beta2's init/joinConfiguration.timeouts
// (seconds), as ConvertKubeadmConfigSpecV1Beta1ToHub does (cluster-api@v1.14.0
// bootstrap/kubeadm/webhooks/conversion/kubeadmconfig.go). A duration that does not parse stays.
func moveTimeouts(spec map[string]any) {
	seconds := func(v any) (int64, bool) {
		s, ok := v.(string)
		if !ok {
			return 0, false
		}
		d, err := time.ParseDuration(s)
		return int64(d / time.Second), err == nil
	}
	timeouts := func(section string) map[string]any {
		c, ok := spec[section].(map[string]any)
		if !ok {
			c = map[string]any{}
			spec[section] = c
		}
		t, ok := c["timeouts"].(map[string]any)
		if !ok {
			t = map[string]any{}
			c["timeouts"] = t
		}
		return t
	}
	if as, ok := under(spec, "clusterConfiguration", "apiServer"); ok {
		if n, ok := seconds(as["timeoutForControlPlane"]); ok {
			delete(as, "timeoutForControlPlane")
			timeouts("initConfiguration")["controlPlaneComponentHealthCheckSeconds"] = n
			timeouts("joinConfiguration")["controlPlaneComponentHealthCheckSeconds"] = n
		}
	}
	if d, ok := under(spec, "joinConfiguration", "discovery"); ok {
		if n, ok := seconds(d["timeout"]); ok {
			delete(d, "timeout")
			timeouts("joinConfiguration")["tlsBootstrapSeconds"] = n
		}
	}
}

// under is the object at keys under m.
func under(m map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		n, ok := m[k].(map[string]any)
		if !ok {
			return nil, false
		}
		m = n
	}
	return m, true
}

// dropV1Beta1Only drops the kubeadmConfigSpec fields v1beta2 dropped: the DNS domain and subnets come
// from the Cluster's clusterNetwork and the version from the KubeadmControlPlane's, and
// useExperimentalRetryJoin is gone (cluster-api@v1.14.0 api/bootstrap/kubeadm/v1beta1/conversion.go).
func dropV1Beta1Only(spec map[string]any) {
	delete(spec, "useExperimentalRetryJoin")
	if cc, ok := spec["clusterConfiguration"].(map[string]any); ok {
		delete(cc, "networking")
		delete(cc, "kubernetesVersion")
		if len(cc) == 0 {
			delete(spec, "clusterConfiguration")
		}
	}
}

// SameSpec reports whether k and o have the same kubeadmConfigSpec. Across API versions (one
// v1beta1, one v1beta2) the fields only v1beta1 has are left out: v1beta2 takes them from the
// Cluster and the KubeadmControlPlane, which are compared on their own.
func (k *KCP) SameSpec(o *KCP) bool {
	a, b := k.SpecJSON, o.SpecJSON
	var x, y map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	if version(k.APIVersion) != version(o.APIVersion) {
		dropV1Beta1Only(x)
		dropV1Beta1Only(y)
	}
	return reflect.DeepEqual(x, y)
}

func version(apiVersion string) string {
	_, v, _ := strings.Cut(apiVersion, "/")
	return v
}
