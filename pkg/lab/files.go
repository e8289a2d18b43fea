// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writePKI creates (or reuses, if the directory has them) the CA, the admin and controller-manager
// client certificates and the shared service-account key pair.
func (l *Lab) writePKI() error {
	caCrt, caKey := l.path("pki", "ca.crt"), l.path("pki", "ca.key")
	var err error
	if exists(caCrt) && exists(caKey) {
		l.ca, err = loadCA(caCrt, caKey)
	} else {
		l.ca, err = newCA()
		if err == nil {
			err = writeCAKey(l.ca, caCrt, caKey)
		}
	}
	if err != nil {
		return err
	}
	l.adminCert, l.adminKey, err = l.ca.issue("credwatch-lab-admin", []string{"system:masters"}, nil, nil, false)
	if err != nil {
		return err
	}
	if err := writePair(l.path("pki", "admin.crt"), l.path("pki", "admin.key"), l.adminCert, l.adminKey); err != nil {
		return err
	}
	kc, kk, err := l.ca.issue("system:kube-controller-manager", nil, nil, nil, false)
	if err != nil {
		return err
	}
	if err := writePair(l.path("pki", "kube-controller-manager.crt"), l.path("pki", "kube-controller-manager.key"), kc, kk); err != nil {
		return err
	}
	if !exists(l.SharedSAKeyFile()) {
		if err := newSAKey(l.SharedSAKeyFile(), l.SharedSAPubFile()); err != nil {
			return err
		}
	} else if err := publicFromPrivate(l.SharedSAKeyFile(), l.SharedSAPubFile()); err != nil {
		return err
	}
	pair, err := tls.X509KeyPair(l.adminCert, l.adminKey)
	if err != nil {
		return fmt.Errorf("admin key pair: %w", err)
	}
	l.tlsc = &tls.Config{RootCAs: certPool(l.ca.certPEM), Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	return nil
}

func writeCAKey(c *ca, certFile, keyFile string) error {
	_, keyPEM, err := marshalSigner(c.key)
	if err != nil {
		return err
	}
	return writePair(certFile, keyFile, c.certPEM, keyPEM)
}

// servingCert issues a member's serving certificate: CN = member name, SANs = its IP, the load
// balancer's IP, the kubernetes service IP and names.
func (l *Lab) servingCert(name, ip string) (certFile, keyFile string, err error) {
	lbIP := l.lbIP()
	ips := []net.IP{net.ParseIP(ip), net.ParseIP(lbIP), net.ParseIP("10.96.0.1")}
	dns := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	c, k, err := l.ca.issue(name, nil, ips, dns, true)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = l.path("pki", name+".crt"), l.path("pki", name+".key")
	return certFile, keyFile, writePair(certFile, keyFile, c, k)
}

func (l *Lab) writeKubeconfigs() error {
	server := "https://" + l.LBAddress()
	if err := writeKubeconfig(l.AdminKubeconfig(), server, "credwatch-lab-admin", l.ca.certPEM, l.adminCert, l.adminKey); err != nil {
		return err
	}
	kc, err := os.ReadFile(l.path("pki", "kube-controller-manager.crt"))
	if err != nil {
		return fmt.Errorf("read controller-manager certificate: %w", err)
	}
	kk, err := os.ReadFile(l.path("pki", "kube-controller-manager.key"))
	if err != nil {
		return fmt.Errorf("read controller-manager key: %w", err)
	}
	return writeKubeconfig(l.path("kube-controller-manager.kubeconfig"), server, "system:kube-controller-manager", l.ca.certPEM, kc, kk)
}

// writeClientKubeconfig issues a client certificate (CN user, O orgs) and writes
// <dir>/<name>.kubeconfig pointing at the load balancer.
func (l *Lab) writeClientKubeconfig(name, user string, orgs []string) error {
	c, k, err := l.ca.issue(user, orgs, nil, nil, false)
	if err != nil {
		return fmt.Errorf("%s client certificate: %w", name, err)
	}
	return writeKubeconfig(l.path(name+".kubeconfig"), "https://"+l.LBAddress(), user, l.ca.certPEM, c, k)
}

func writeKubeconfig(file, server, user string, caPEM, certPEM, keyPEM []byte) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["credwatch-lab"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["credwatch-lab"] = &clientcmdapi.Context{Cluster: "credwatch-lab", AuthInfo: user}
	cfg.CurrentContext = "credwatch-lab"
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", file, err)
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
