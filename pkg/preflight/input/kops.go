// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

// KopsCluster is the part of a kops Cluster spec the predictions read.
type KopsCluster struct {
	Object
	KubernetesVersion string
	MasterPublicName  string
	APIAccess         []string
	AnonymousAuth     *bool
	Issuer            string
	Additional        []string
	Audiences         []string
	DiscoveryStore    string
}

func parseKops(s *Set, obj Object, _ header, doc []byte) error {
	var k struct {
		Spec struct {
			KubernetesVersion   string   `json:"kubernetesVersion"`
			MasterPublicName    string   `json:"masterPublicName"`
			KubernetesAPIAccess []string `json:"kubernetesApiAccess"`
			KubeAPIServer       *struct {
				AnonymousAuth                   *bool    `json:"anonymousAuth"`
				ServiceAccountIssuer            string   `json:"serviceAccountIssuer"`
				AdditionalServiceAccountIssuers []string `json:"additionalServiceAccountIssuers"`
				APIAudiences                    []string `json:"apiAudiences"`
			} `json:"kubeAPIServer"`
			ServiceAccountIssuerDiscovery *struct {
				DiscoveryStore string `json:"discoveryStore"`
			} `json:"serviceAccountIssuerDiscovery"`
		} `json:"spec"`
	}
	if err := unmarshal(doc, &k); err != nil {
		return err
	}
	out := KopsCluster{Object: obj, KubernetesVersion: k.Spec.KubernetesVersion, MasterPublicName: k.Spec.MasterPublicName,
		APIAccess: k.Spec.KubernetesAPIAccess}
	if a := k.Spec.KubeAPIServer; a != nil {
		out.AnonymousAuth, out.Issuer, out.Additional, out.Audiences = a.AnonymousAuth, a.ServiceAccountIssuer, a.AdditionalServiceAccountIssuers, a.APIAudiences
	}
	if d := k.Spec.ServiceAccountIssuerDiscovery; d != nil {
		out.DiscoveryStore = d.DiscoveryStore
	}
	s.Kops = append(s.Kops, out)
	return nil
}

// KopsGroup is a kops InstanceGroup.
type KopsGroup struct {
	Object
	Role    string
	MinSize int
}

func parseKopsGroup(s *Set, obj Object, _ header, doc []byte) error {
	var g struct {
		Spec struct {
			Role    string `json:"role"`
			MinSize *int   `json:"minSize"`
		} `json:"spec"`
	}
	if err := unmarshal(doc, &g); err != nil {
		return err
	}
	out := KopsGroup{Object: obj, Role: g.Spec.Role, MinSize: 1}
	if g.Spec.MinSize != nil {
		out.MinSize = *g.Spec.MinSize
	}
	s.KopsGroups = append(s.KopsGroups, out)
	return nil
}
