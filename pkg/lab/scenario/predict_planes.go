// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// The scenarios of the newer machinery change what the members' flags name rather than the
// flags: the keys a member's signer serves, the AuthenticationConfiguration a member reads.
// preflight is given those too, as an operator would: the signers' public keys beside the
// manifests, and each member's configuration file.

// plane is one side of a prediction: the members' flags, the PEM key files their signers serve
// (public halves are what preflight is given), and documents their flags name (file → YAML).
type plane struct {
	members  []lab.Member
	keyFiles []string
	docs     map[string][]byte
}

// set is p as preflight input, its files named under dir ("current", "planned").
func (p plane) set(ctx context.Context, dir string) (*input.Set, error) {
	s := &input.Set{}
	for _, m := range p.members {
		if err := s.Add(dir+"/"+m.Name+".yaml", staticPodManifest(m)); err != nil {
			return nil, err
		}
	}
	if len(p.keyFiles) > 0 {
		ks, err := keys.LoadPEMFiles(ctx, p.keyFiles...)
		if err != nil {
			return nil, err
		}
		s.AddKeys(dir+"/signer-keys", ks)
	}
	names := make([]string, 0, len(p.docs))
	for f := range p.docs {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		if err := s.Add(dir+"/"+f, p.docs[f]); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// predictPlanes runs preflight offline with cur as the current side and plan as the planned one.
func predictPlanes(ctx context.Context, cur, plan plane, observable []string) Prediction {
	p := Prediction{Observable: observable}
	c, err := cur.set(ctx, "current")
	if err == nil {
		var pl *input.Set
		if pl, err = plan.set(ctx, "planned"); err == nil {
			var r *preflight.Report
			if r, err = preflight.Run(preflight.Config{Current: c, Planned: pl}); err == nil {
				p.Predicted = r.IDs()
			}
		}
	}
	if err != nil {
		p.Error = err.Error()
	}
	return p
}

// authnObservable are the preflight IDs an AuthenticationConfiguration edit shows or rules out.
var authnObservable = []string{"authn-config-issuer-is-sa-issuer"}

// authnObserved: a member refused its edited configuration because a JWT issuer is the
// service-account issuer ("URL must not overlap with disallowed issuers", k8s.io/apiserver
// pkg/apis/apiserver/validation/validation.go at v0.36.3).
func authnObserved(ph Phase) []string {
	for _, m := range ph.Members {
		for _, mc := range m.AuthnConfigMessages {
			if strings.Contains(mc.Message, "URL must not overlap with disallowed issuers") {
				return []string{"authn-config-issuer-is-sa-issuer"}
			}
		}
	}
	return nil
}
