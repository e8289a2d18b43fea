// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/credwatch/credwatch/pkg/keys"
)

// Cluster API's own kinds (Cluster, Machine, KubeadmControlPlane, KubeadmConfig(Template)) are
// read in both API versions Cluster API serves, into the same structs, so that the same cluster
// written either way gives the same prediction. v1beta2 (Cluster API v1.11+, the only one from
// v1.16) moved what preflight reads (cluster-api@v1.14.0, api/core/v1beta2/common_types.go
// ContractVersionedObjectReference, api/controlplane/kubeadm/v1beta2/kubeadm_control_plane_types.go,
// api/bootstrap/kubeadm/v1beta2/kubeadm_types.go):
//
//	v1beta1                                          v1beta2
//	ref {apiVersion, kind, name}                     ref {apiGroup, kind, name}
//	KCP spec.rolloutAfter                            spec.rollout.after
//	KCP spec.rolloutStrategy.rollingUpdate.maxSurge  spec.rollout.strategy.rollingUpdate.maxSurge
//	KCP spec.machineTemplate.infrastructureRef       spec.machineTemplate.spec.infrastructureRef
//	extraArgs {name: value}                          extraArgs [{name, value}] (kubeadm v1beta4)
//	clusterConfiguration.networking.dnsDomain        Cluster spec.clusterNetwork.serviceDomain only
//
// Machine spec.version, the files and the commands of a KubeadmConfigSpec did not move.
const (
	capiV1Beta1 = "v1beta1"
	capiV1Beta2 = "v1beta2"
)

// capiVersion is the version of a Cluster API kind's apiVersion, refused when it is neither
// v1beta1 nor v1beta2: fields move between versions, and one preflight does not know could be
// read wrong without a word (v1alpha3 and v1alpha4 are no longer served since Cluster API v1.13).
func capiVersion(h header) (string, error) {
	group, v, _ := strings.Cut(h.APIVersion, "/")
	if v != capiV1Beta1 && v != capiV1Beta2 {
		return "", fmt.Errorf("apiVersion %q: preflight reads %s/%s and %s/%s", h.APIVersion, group, capiV1Beta1, group, capiV1Beta2)
	}
	return v, nil
}

// Cluster is a Cluster API Cluster.
type Cluster struct {
	Object
	ControlPlaneRef   Ref
	InfrastructureRef Ref
	// ServiceDomain is spec.clusterNetwork.serviceDomain: the DNS domain kubeadm is given
	// unless a v1beta1 clusterConfiguration.networking.dnsDomain says otherwise.
	ServiceDomain string
}

// Ref is an object reference: v1beta1 names the apiVersion, v1beta2 the apiGroup (the version
// comes from the contract labels of the referenced CRD).
type Ref struct {
	APIVersion string `json:"apiVersion,omitempty"`
	APIGroup   string `json:"apiGroup,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
}

// Group is the API group of the object r names, in either form.
func (r Ref) Group() string {
	if r.APIGroup != "" {
		return r.APIGroup
	}
	if g, _, ok := strings.Cut(r.APIVersion, "/"); ok {
		return g
	}
	return ""
}

func parseCluster(s *Set, obj Object, h header, doc []byte) error {
	if _, err := capiVersion(h); err != nil {
		return err
	}
	var c struct {
		Spec struct {
			ControlPlaneRef   Ref `json:"controlPlaneRef"`
			InfrastructureRef Ref `json:"infrastructureRef"`
			ClusterNetwork    *struct {
				ServiceDomain string `json:"serviceDomain"`
			} `json:"clusterNetwork"`
		} `json:"spec"`
	}
	if err := unmarshal(doc, &c); err != nil {
		return err
	}
	out := Cluster{Object: obj, ControlPlaneRef: c.Spec.ControlPlaneRef, InfrastructureRef: c.Spec.InfrastructureRef}
	if c.Spec.ClusterNetwork != nil {
		out.ServiceDomain = c.Spec.ClusterNetwork.ServiceDomain
	}
	s.Clusters = append(s.Clusters, out)
	return nil
}

// KCP is a KubeadmControlPlane.
type KCP struct {
	Object
	APIVersion string
	Labels     map[string]string
	Replicas   int
	Version    string
	// MaxSurge is the rolling update's maxSurge (default 1).
	MaxSurge         int
	RolloutAfter     string
	InfraTemplate    string
	TemplateMetadata json.RawMessage
	Spec             KubeadmConfigSpec
	// SpecJSON is kubeadmConfigSpec in one form for both API versions (canonicalSpec), for
	// "any difference" (filters.go).
	SpecJSON json.RawMessage
}

// KubeadmConfigSpec is the part of a KubeadmConfigSpec the predictions read.
type KubeadmConfigSpec struct {
	ClusterConfiguration *ClusterConfiguration `json:"clusterConfiguration,omitempty"`
	InitConfiguration    NodeConfiguration     `json:"initConfiguration"`
	JoinConfiguration    NodeConfiguration     `json:"joinConfiguration"`
	Files                []File                `json:"files,omitempty"`
	PreKubeadmCommands   []string              `json:"preKubeadmCommands,omitempty"`
	PostKubeadmCommands  []string              `json:"postKubeadmCommands,omitempty"`
}

// File is one entry of KubeadmConfigSpec.files.
type File struct {
	Path     string `json:"path"`
	Encoding string `json:"encoding,omitempty"`
	Content  string `json:"content,omitempty"`
	// ContentFrom names the Secret key the bootstrap provider reads the content from.
	ContentFrom *struct {
		Secret struct {
			Name string `json:"name"`
			Key  string `json:"key"`
		} `json:"secret"`
	} `json:"contentFrom,omitempty"`
}

// Text is the file's content, decoded.
func (f File) Text() string {
	if strings.HasPrefix(f.Encoding, "base64") {
		if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(f.Content)); err == nil {
			return string(b)
		}
	}
	return f.Content
}

// ErrNoKubeadmConfigSpec is a KubeadmControlPlane without spec.kubeadmConfigSpec.
var ErrNoKubeadmConfigSpec = errors.New("no spec.kubeadmConfigSpec")

// rollingUpdate is a KubeadmControlPlane's rollingUpdate, in either version.
type rollingUpdate struct {
	RollingUpdate struct {
		MaxSurge *json.RawMessage `json:"maxSurge"`
	} `json:"rollingUpdate"`
}

func parseKCP(s *Set, obj Object, h header, doc []byte) error {
	v, err := capiVersion(h)
	if err != nil {
		return err
	}
	var k struct {
		Spec struct {
			Replicas          *int            `json:"replicas"`
			Version           string          `json:"version"`
			KubeadmConfigSpec json.RawMessage `json:"kubeadmConfigSpec"`
			MachineTemplate   struct {
				Metadata          json.RawMessage `json:"metadata"`
				InfrastructureRef Ref             `json:"infrastructureRef"` // v1beta1
				Spec              struct {
					InfrastructureRef Ref `json:"infrastructureRef"`
				} `json:"spec"` // v1beta2
			} `json:"machineTemplate"`
			// v1beta1
			RolloutAfter    string        `json:"rolloutAfter"`
			RolloutStrategy rollingUpdate `json:"rolloutStrategy"`
			// v1beta2
			Rollout struct {
				After    string        `json:"after"`
				Strategy rollingUpdate `json:"strategy"`
			} `json:"rollout"`
		} `json:"spec"`
	}
	if err := unmarshal(doc, &k); err != nil {
		return err
	}
	if len(k.Spec.KubeadmConfigSpec) == 0 || string(k.Spec.KubeadmConfigSpec) == "null" {
		return ErrNoKubeadmConfigSpec
	}
	after, infra, strategy := k.Spec.RolloutAfter, k.Spec.MachineTemplate.InfrastructureRef, k.Spec.RolloutStrategy
	if v == capiV1Beta2 {
		after, infra, strategy = k.Spec.Rollout.After, k.Spec.MachineTemplate.Spec.InfrastructureRef, k.Spec.Rollout.Strategy
	}
	spec, err := canonicalSpec(k.Spec.KubeadmConfigSpec)
	if err != nil {
		return err
	}
	out := KCP{Object: obj, APIVersion: h.APIVersion, Labels: h.Metadata.Labels, Replicas: 1, Version: k.Spec.Version, MaxSurge: 1,
		RolloutAfter: after, InfraTemplate: infra.Name, TemplateMetadata: k.Spec.MachineTemplate.Metadata, SpecJSON: spec}
	if k.Spec.Replicas != nil {
		out.Replicas = *k.Spec.Replicas
	}
	if ms := strategy.RollingUpdate.MaxSurge; ms != nil {
		var n int
		if json.Unmarshal(*ms, &n) == nil && n == 0 {
			out.MaxSurge = 0
		} else if strings.Trim(string(*ms), `"`) == "0%" || strings.Trim(string(*ms), `"`) == "0" {
			out.MaxSurge = 0
		}
	}
	if err := unmarshal(k.Spec.KubeadmConfigSpec, &out.Spec); err != nil {
		return err
	}
	s.KCPs = append(s.KCPs, out)
	return nil
}

// KubeadmConfig is a KubeadmConfig or the template of a KubeadmConfigTemplate.
type KubeadmConfig struct {
	Object
	Spec KubeadmConfigSpec
}

func parseKubeadmConfig(s *Set, obj Object, h header, doc []byte) error {
	if _, err := capiVersion(h); err != nil {
		return err
	}
	var k struct {
		Spec KubeadmConfigSpec `json:"spec"`
	}
	if err := unmarshal(doc, &k); err != nil {
		return err
	}
	s.Configs = append(s.Configs, KubeadmConfig{Object: obj, Spec: k.Spec})
	return nil
}

func parseKubeadmConfigTemplate(s *Set, obj Object, h header, doc []byte) error {
	if _, err := capiVersion(h); err != nil {
		return err
	}
	var k struct {
		Spec struct {
			Template struct {
				Spec KubeadmConfigSpec `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := unmarshal(doc, &k); err != nil {
		return err
	}
	s.Configs = append(s.Configs, KubeadmConfig{Object: obj, Spec: k.Spec.Template.Spec})
	return nil
}

// Machine is a Cluster API Machine.
type Machine struct {
	Object
	ControlPlane  bool
	Version       string
	InfraTemplate string // the cloned-from-name annotation of the machine's infrastructure
	Created       string
}

func parseMachine(s *Set, obj Object, h header, doc []byte) error {
	if _, err := capiVersion(h); err != nil {
		return err
	}
	var m struct {
		Spec struct {
			Version string `json:"version"`
		} `json:"spec"`
	}
	if err := unmarshal(doc, &m); err != nil {
		return err
	}
	_, cp := h.Metadata.Labels["cluster.x-k8s.io/control-plane"]
	s.Machines = append(s.Machines, Machine{Object: obj, ControlPlane: cp, Version: m.Spec.Version,
		InfraTemplate: h.Metadata.Annotations["cluster.x-k8s.io/cloned-from-name"], Created: h.Metadata.CreationTimestamp})
	return nil
}

// Provider is a clusterctl inventory Provider.
type Provider struct {
	Object
	Type    string
	Name    string
	Version string
}

func parseProvider(s *Set, obj Object, _ header, doc []byte) error {
	var p struct {
		ProviderName string `json:"providerName"`
		Type         string `json:"type"`
		Version      string `json:"version"`
	}
	if err := unmarshal(doc, &p); err != nil {
		return err
	}
	s.Providers = append(s.Providers, Provider{Object: obj, Type: p.Type, Name: p.ProviderName, Version: p.Version})
	return nil
}

// SASecret is a <cluster>-sa Secret: only the kid of its key is kept, never the key.
type SASecret struct {
	Object
	KeyID string
	// HasPrivate records that the Secret carried a private key (never its bytes).
	HasPrivate bool
}

func parseSecret(s *Set, obj Object, _ header, doc []byte) error {
	var sec struct {
		Type       string            `json:"type"`
		Data       map[string][]byte `json:"data"`
		StringData map[string]string `json:"stringData"`
	}
	if err := unmarshal(doc, &sec); err != nil {
		return err
	}
	// As the API server stores it: stringData merged over data, its keys winning.
	for k, v := range sec.StringData {
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		sec.Data[k] = []byte(v)
	}
	switch {
	case sec.Type == "kubernetes.io/service-account-token":
		s.LegacyToken = append(s.LegacyToken, obj)
	case strings.HasSuffix(obj.Name, "-sa"):
		out := SASecret{Object: obj}
		for _, k := range []string{"tls.crt", "tls.key"} {
			if len(sec.Data[k]) == 0 {
				continue
			}
			ks, err := keys.ParsePEM(sec.Data[k], obj.Name+" "+k)
			if err != nil {
				return errors.New("data." + k + " holds no RSA or ECDSA key")
			}
			out.HasPrivate = out.HasPrivate || ks[0].Private != nil
			if out.KeyID == "" {
				out.KeyID = ks[0].KeyID
			}
		}
		s.SASecrets = append(s.SASecrets, out)
	default:
		s.Ignored = append(s.Ignored, obj)
	}
	return nil
}

// labHealthCheck maps the lab provider's health check (pkg/lab/capi/infra; its default is
// https-readyz) to the protocol and path a cloud balancer states.
func labHealthCheck(hc string) (protocol, path string, known bool) {
	switch hc {
	case "tcp":
		return "TCP", "", true
	case "tls":
		return "SSL", "", true
	case "https-readyz", "":
		return "HTTPS", "/readyz", true
	}
	return "", "", false
}

// providerDefaultLB reports whether a provider cluster of kind with no health check in its spec
// still has a control-plane load balancer whose check its provider decides (preflight judges it
// by provider and version): AWS, Azure, vSphere (kube-vip), Hetzner; OpenStack only with
// spec.apiServerLoadBalancer.enabled (octavia true).
func providerDefaultLB(kind string, octavia bool) bool {
	switch kind {
	case "AWSCluster", "AzureCluster", "VSphereCluster", "HetznerCluster":
		return true
	case "OpenStackCluster":
		return octavia
	}
	return false
}

// LBCheck is a provider cluster's control-plane load-balancer health check.
type LBCheck struct {
	Object
	APIVersion string
	Protocol   string // TCP, SSL, HTTP, HTTPS; "" when the object does not say
	Path       string
	Target     string // as the provider wrote it in status (CAPA classic: "SSL:6443")
}

func parseLBCheck(s *Set, obj Object, h header, doc []byte) error {
	var c struct {
		Spec struct {
			ControlPlaneLoadBalancer *struct {
				HealthCheckProtocol string `json:"healthCheckProtocol"`
				HealthCheck         *struct {
					Protocol string `json:"protocol"`
					Path     string `json:"path"`
				} `json:"healthCheck"`
			} `json:"controlPlaneLoadBalancer"`
			// The lab provider's LabCluster: loadBalancer.healthCheck tcp, tls or https-readyz.
			LoadBalancer *struct {
				HealthCheck string `json:"healthCheck"`
			} `json:"loadBalancer"`
			// CAPO: an Octavia load balancer only when enabled.
			APIServerLoadBalancer *struct {
				Enabled *bool `json:"enabled"`
			} `json:"apiServerLoadBalancer"`
		} `json:"spec"`
		Status struct {
			Network struct {
				APIServerELB struct {
					HealthChecks struct {
						Target string `json:"target"`
					} `json:"healthChecks"`
				} `json:"apiServerElb"`
			} `json:"network"`
		} `json:"status"`
	}
	if err := unmarshal(doc, &c); err != nil {
		return err
	}
	lb := c.Spec.ControlPlaneLoadBalancer
	out := LBCheck{Object: obj, APIVersion: h.APIVersion, Target: c.Status.Network.APIServerELB.HealthChecks.Target}
	if llb := c.Spec.LoadBalancer; lb == nil && out.Target == "" && llb != nil {
		proto, path, known := labHealthCheck(llb.HealthCheck)
		if known {
			out.Protocol, out.Path = proto, path
			s.LBChecks = append(s.LBChecks, out)
			return nil
		}
	}
	if lb == nil && out.Target == "" && !providerDefaultLB(obj.Kind, c.Spec.APIServerLoadBalancer != nil && c.Spec.APIServerLoadBalancer.Enabled != nil && *c.Spec.APIServerLoadBalancer.Enabled) {
		s.Ignored = append(s.Ignored, obj)
		return nil
	}
	if lb != nil {
		out.Protocol = strings.ToUpper(lb.HealthCheckProtocol)
		if lb.HealthCheck != nil {
			out.Protocol, out.Path = strings.ToUpper(lb.HealthCheck.Protocol), lb.HealthCheck.Path
		}
	}
	if out.Target != "" {
		proto, rest, _ := strings.Cut(out.Target, ":")
		out.Protocol = strings.ToUpper(proto)
		if _, path, ok := strings.Cut(rest, "/"); ok {
			out.Path = "/" + path
		} else {
			out.Path = ""
		}
	}
	s.LBChecks = append(s.LBChecks, out)
	return nil
}
