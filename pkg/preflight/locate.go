// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"strings"

	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// locate gives each finding the file and line it is about, SARIF's physicalLocation, which
// code-scanning services require of a result: the object the finding names, else the object of
// its kind (the -sa Secret for a signing-key finding, the infrastructure cluster for a load
// balancer one), else the control-plane object. The planned side is looked at first (that is
// the change under review), then the current one. Objects read from a cluster have no line and
// give no location.
func locate(fs []finding.Finding, sides ...*input.Set) {
	for i := range fs {
		if o, ok := locationOf(fs[i], sides); ok {
			fs[i].Location = &finding.Location{File: o.File, Line: o.Line}
		}
	}
}

func locationOf(f finding.Finding, sides []*input.Set) (input.Object, bool) {
	for _, s := range sides {
		if s == nil {
			continue
		}
		if kind, name, ok := strings.Cut(f.Object, "/"); ok {
			for _, o := range objects(s) {
				if o.Kind == kind && o.Name == name && o.Line > 0 {
					return o, true
				}
			}
		}
	}
	for _, s := range sides {
		if s == nil {
			continue
		}
		var pick []input.Object
		switch {
		case strings.HasPrefix(f.ID, "sa-key-"):
			pick = objectsOf(s.SASecrets)
		case strings.HasPrefix(f.ID, "lb-"):
			pick = objectsOf(s.LBChecks)
		case f.ID == "legacy-token-secrets":
			pick = s.LegacyToken
		case f.ID == "authn-config-issuer-is-sa-issuer":
			pick = objectsOf(s.AuthnConfigs)
		case f.ID == "signer-switch-without-old-keys":
			pick = objectsOf(s.JWKS)
		}
		pick = append(pick, primary(s)...)
		for _, o := range pick {
			if o.Line > 0 {
				return o, true
			}
		}
	}
	return input.Object{}, false
}

// primary lists the objects that say what a control plane runs, in the order preflight reads
// them.
func primary(s *input.Set) []input.Object {
	var out []input.Object
	out = append(out, objectsOf(s.KCPs)...)
	out = append(out, objectsOf(s.Kubeadm)...)
	out = append(out, objectsOf(s.StaticPods)...)
	return append(out, objectsOf(s.Kops)...)
}

// objects lists every object of s preflight read.
func objects(s *input.Set) []input.Object {
	out := primary(s)
	out = append(out, objectsOf(s.Clusters)...)
	out = append(out, objectsOf(s.Configs)...)
	out = append(out, objectsOf(s.Machines)...)
	out = append(out, objectsOf(s.SASecrets)...)
	out = append(out, objectsOf(s.LBChecks)...)
	return append(out, s.LegacyToken...)
}

func objectsOf[T interface{ Doc() input.Object }](ts []T) []input.Object {
	out := make([]input.Object, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Doc())
	}
	return out
}
