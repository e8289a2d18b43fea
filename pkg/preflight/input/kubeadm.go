// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/credwatch/credwatch/pkg/cmdline"
)

// Args are a component's extraArgs: kubeadm v1beta3 and Cluster API write a map, kubeadm
// v1beta4 a list of {name, value} that may repeat a name. Both read into the same Args, so the
// same flags in either form are equal.
type Args map[string][]string

// UnmarshalJSON reads either form.
func (a *Args) UnmarshalJSON(b []byte) error {
	out := Args{}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err == nil {
		for k, v := range m {
			out[k] = []string{v}
		}
		*a = out
		return nil
	}
	var l []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return errors.New("extraArgs: neither a map of strings nor a list of {name, value}")
	}
	for _, e := range l {
		out[e.Name] = append(out[e.Name], strings.TrimSpace(e.Value))
	}
	*a = out
	return nil
}

// ClusterConfiguration is the part of a kubeadm ClusterConfiguration the predictions read.
type ClusterConfiguration struct {
	APIServer struct {
		ExtraArgs Args `json:"extraArgs,omitempty"`
	} `json:"apiServer"`
	ControllerManager struct {
		ExtraArgs Args `json:"extraArgs,omitempty"`
	} `json:"controllerManager"`
	Etcd struct {
		External *json.RawMessage `json:"external,omitempty"`
	} `json:"etcd"`
	Networking struct {
		DNSDomain string `json:"dnsDomain,omitempty"`
	} `json:"networking"`
	CertificatesDir   string `json:"certificatesDir,omitempty"`
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
}

// KubeadmFile is one kubeadm configuration document.
type KubeadmFile struct {
	Object
	APIVersion string
	Cluster    *ClusterConfiguration // kind ClusterConfiguration
	// Node is an InitConfiguration's or JoinConfiguration's patches.
	Node *NodeConfiguration
}

// kubeadmVersions are the kubeadm configuration API versions preflight reads; v1beta1 and older
// are no longer read by any supported kubeadm.
var kubeadmVersions = []string{"kubeadm.k8s.io/v1beta2", "kubeadm.k8s.io/v1beta3", "kubeadm.k8s.io/v1beta4"}

func parseKubeadm(s *Set, obj Object, h header, doc []byte) error {
	if !slices.Contains(kubeadmVersions, h.APIVersion) {
		// Fields move between kubeadm API versions (extraArgs became a list in v1beta4): one
		// preflight does not know could be read wrong without a word.
		return fmt.Errorf("apiVersion %q: preflight reads %s", h.APIVersion, strings.Join(kubeadmVersions, ", "))
	}
	out := KubeadmFile{Object: obj, APIVersion: h.APIVersion}
	if h.Kind == "ClusterConfiguration" {
		out.Cluster = &ClusterConfiguration{}
		if err := unmarshal(doc, out.Cluster); err != nil {
			return err
		}
	} else {
		out.Node = &NodeConfiguration{}
		if err := unmarshal(doc, out.Node); err != nil {
			return err
		}
	}
	s.Kubeadm = append(s.Kubeadm, out)
	return nil
}

// StaticPod is a kube-apiserver static-pod manifest.
type StaticPod struct {
	Object
	Member string // the advertise address, else the pod's name
	Flags  cmdline.Flags
}

func parseStaticPod(s *Set, obj Object, h header, doc []byte) error {
	var p struct {
		Spec struct {
			Containers []struct {
				Name    string   `json:"name"`
				Command []string `json:"command"`
				Args    []string `json:"args"`
			} `json:"containers"`
		} `json:"spec"`
	}
	if err := unmarshal(doc, &p); err != nil {
		return err
	}
	for _, c := range p.Spec.Containers {
		argv := append(append([]string(nil), c.Command...), c.Args...)
		if c.Name == "kube-controller-manager" || len(argv) > 0 && path.Base(argv[0]) == "kube-controller-manager" {
			s.ControllerManagers = append(s.ControllerManagers, StaticPod{Object: obj, Member: obj.Name, Flags: cmdline.Parse(argv)})
			return nil
		}
		if c.Name != "kube-apiserver" && (len(argv) == 0 || path.Base(argv[0]) != "kube-apiserver") {
			continue
		}
		member := h.Metadata.Annotations["kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"]
		f := cmdline.Parse(argv)
		if member == "" {
			member = f.Last("advertise-address")
		}
		if member == "" {
			member = obj.Name
		}
		s.StaticPods = append(s.StaticPods, StaticPod{Object: obj, Member: member, Flags: f})
		return nil
	}
	s.Ignored = append(s.Ignored, obj)
	return nil
}
