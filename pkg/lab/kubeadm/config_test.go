// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package kubeadm

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestInitConfigYAML(t *testing.T) {
	c := InitConfig{
		Lab: LabSettings("/etc/credwatch/kubeadm-patches"), Name: "kadm-1", Advertise: netip.MustParseAddr("10.200.7.60"),
		CRISocket: "unix:///run/containerd/containerd.sock", KubernetesVersion: "v1.30.14", ControlPlaneEndpoint: "10.200.7.1:7443",
	}
	data, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(data, []byte("---\n"))
	if len(docs) != 2 {
		t.Fatalf("%d documents, want InitConfiguration and ClusterConfiguration:\n%s", len(docs), data)
	}
	var init struct {
		Kind             string
		NodeRegistration struct {
			Name, CRISocket, ImagePullPolicy string
			IgnorePreflightErrors            []string
		}
		SkipPhases []string
		Patches    struct{ Directory string }
	}
	var cluster struct {
		Kind, KubernetesVersion, ControlPlaneEndpoint string
		ControllerManager                             struct{ ExtraArgs map[string]string }
	}
	if err := yaml.Unmarshal(docs[0], &init); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(docs[1], &cluster); err != nil {
		t.Fatal(err)
	}
	if init.Kind != "InitConfiguration" || init.NodeRegistration.ImagePullPolicy != "Never" || init.Patches.Directory != "/etc/credwatch/kubeadm-patches" ||
		strings.Join(init.SkipPhases, ",") != "addon/coredns,addon/kube-proxy" || init.NodeRegistration.CRISocket != c.CRISocket {
		t.Errorf("InitConfiguration: %+v", init)
	}
	if cluster.Kind != "ClusterConfiguration" || cluster.ControlPlaneEndpoint != "10.200.7.1:7443" ||
		!strings.HasPrefix(cluster.ControllerManager.ExtraArgs["flex-volume-plugin-dir"], "/var/lib/") {
		t.Errorf("ClusterConfiguration: %+v", cluster)
	}
	if _, err := (InitConfig{Name: "x"}).YAML(); err == nil || !strings.Contains(err.Error(), "want a name") {
		t.Errorf("incomplete config: %v", err)
	}
}
