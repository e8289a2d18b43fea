// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// APIServerKubeletClientCN is the common name of the client certificate kube-apiservers present
// to kubelets (logs, exec, port-forward). Its organisation is system:masters, so the kubelets'
// webhook authorization allows it with no RBAC objects to create.
const APIServerKubeletClientCN = "kube-apiserver-kubelet-client"

// APIServerArgs writes the client certificate kube-apiservers present to kubelets into dir and
// returns the flags every apiserver needs to talk to the nodes: that certificate, caFile to verify
// the kubelets' serving certificates, InternalIP as the address to reach them, and the
// NodeRestriction admission plugin. (The lab already runs --authorization-mode=Node,RBAC.)
func APIServerArgs(dir, caFile string, issue IssueFunc) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("apiserver kubelet client certificate: %w", err)
	}
	crt, key := filepath.Join(dir, "apiserver-kubelet-client.crt"), filepath.Join(dir, "apiserver-kubelet-client.key")
	req := certRequest{cn: APIServerKubeletClientCN, orgs: []string{"system:masters"}}
	if err := req.issueTo(issue, crt, key); err != nil {
		return nil, fmt.Errorf("apiserver kubelet client: %w", err)
	}
	return []string{
		"--kubelet-client-certificate=" + crt,
		"--kubelet-client-key=" + key,
		"--kubelet-certificate-authority=" + caFile,
		"--kubelet-preferred-address-types=InternalIP",
		"--enable-admission-plugins=NodeRestriction",
	}, nil
}

// writePKI writes the CA, the kubelet's serving pair and the kubelet's and kube-proxy's
// kubeconfigs (client certificates embedded).
func (c *Config) writePKI() error {
	if err := os.WriteFile(c.path("pki", "ca.crt"), c.CAPEM, 0o644); err != nil {
		return fmt.Errorf("node %s: write CA: %w", c.Name, err)
	}
	serving := certRequest{cn: c.Name, ips: []net.IP{c.Host.IP.AsSlice()}, dns: []string{c.Name}, server: true}
	if err := serving.issueTo(c.Issue, c.path("pki", "kubelet.crt"), c.path("pki", "kubelet.key")); err != nil {
		return fmt.Errorf("node %s: kubelet serving: %w", c.Name, err)
	}
	for _, id := range []struct{ file, cn, org string }{
		{"kubelet.kubeconfig", "system:node:" + c.Name, "system:nodes"},
		{"kube-proxy.kubeconfig", "system:kube-proxy", ""},
	} {
		var orgs []string
		if id.org != "" {
			orgs = []string{id.org}
		}
		certPEM, keyPEM, err := c.Issue(id.cn, orgs, nil, nil, false)
		if err != nil {
			return fmt.Errorf("node %s: client certificate for %s: %w", c.Name, id.cn, err)
		}
		if err := c.writeKubeconfig(c.path(id.file), id.cn, certPEM, keyPEM); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) writeKubeconfig(file, user string, certPEM, keyPEM []byte) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["lab"] = &clientcmdapi.Cluster{Server: c.APIServer, CertificateAuthorityData: c.CAPEM, TLSServerName: c.APIServerName}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["lab"] = &clientcmdapi.Context{Cluster: "lab", AuthInfo: user}
	cfg.CurrentContext = "lab"
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		return fmt.Errorf("node %s: write kubeconfig %s: %w", c.Name, file, err)
	}
	return nil
}

// certRequest is what IssueFunc takes.
type certRequest struct {
	cn     string
	orgs   []string
	ips    []net.IP
	dns    []string
	server bool
}

// issueTo signs the certificate and writes it and its key (readable by root only).
func (r certRequest) issueTo(issue IssueFunc, certFile, keyFile string) error {
	certPEM, keyPEM, err := issue(r.cn, r.orgs, r.ips, r.dns, r.server)
	if err != nil {
		return fmt.Errorf("certificate for %s: %w", r.cn, err)
	}
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{certFile, certPEM, 0o644}, {keyFile, keyPEM, 0o600}} {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	return nil
}
