// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
)

// writePKI creates (or reuses, if the directory has them) the CA, the admin and controller-manager
// client certificates and the shared service-account key pair.
func (l *Lab) writePKI() error {
	var err error
	if l.ca, err = pki.LoadOrCreateCA(l.path("pki", "ca.crt"), l.path("pki", "ca.key")); err != nil {
		return err
	}
	l.adminCert, l.adminKey, err = l.ca.Issue("credwatch-lab-admin", []string{"system:masters"}, nil, nil, false)
	if err != nil {
		return err
	}
	if err := pki.WritePair(l.path("pki", "admin.crt"), l.path("pki", "admin.key"), l.adminCert, l.adminKey); err != nil {
		return err
	}
	kc, kk, err := l.ca.Issue("system:kube-controller-manager", nil, nil, nil, false)
	if err != nil {
		return err
	}
	if err := pki.WritePair(l.path("pki", "kube-controller-manager.crt"), l.path("pki", "kube-controller-manager.key"), kc, kk); err != nil {
		return err
	}
	if !fileExists(l.SharedSAKeyFile()) {
		if err := pki.NewSAKey(l.SharedSAKeyFile(), l.SharedSAPubFile()); err != nil {
			return err
		}
	} else if err := pki.PublicFromPrivate(l.SharedSAKeyFile(), l.SharedSAPubFile()); err != nil {
		return err
	}
	pair, err := tls.X509KeyPair(l.adminCert, l.adminKey)
	if err != nil {
		return fmt.Errorf("admin key pair: %w", err)
	}
	l.tlsc = &tls.Config{RootCAs: l.ca.Pool(), Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	return nil
}

// servingCert issues a member's serving certificate: CN = member name, SANs = its IP, the load
// balancer's IP, the kubernetes service IP and names.
func (l *Lab) servingCert(name, ip string) (certFile, keyFile string, err error) {
	lbIP := l.lbIP()
	ips := []net.IP{net.ParseIP(ip), net.ParseIP(lbIP), net.ParseIP("10.96.0.1")}
	dns := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	c, k, err := l.ca.Issue(name, nil, ips, dns, true)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = l.path("pki", name+".crt"), l.path("pki", name+".key")
	return certFile, keyFile, pki.WritePair(certFile, keyFile, c, k)
}

func (l *Lab) writeKubeconfigs() error {
	server := "https://" + l.LBAddress()
	if err := pki.WriteKubeconfig(l.AdminKubeconfig(), server, "credwatch-lab-admin", l.ca.CertPEM(), l.adminCert, l.adminKey); err != nil {
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
	return pki.WriteKubeconfig(l.path("kube-controller-manager.kubeconfig"), server, "system:kube-controller-manager", l.ca.CertPEM(), kc, kk)
}

// writeClientKubeconfig issues a client certificate (CN user, O orgs) and writes
// <dir>/<name>.kubeconfig pointing at the load balancer.
func (l *Lab) writeClientKubeconfig(name, user string, orgs []string) error {
	c, k, err := l.ca.Issue(user, orgs, nil, nil, false)
	if err != nil {
		return fmt.Errorf("%s client certificate: %w", name, err)
	}
	return pki.WriteKubeconfig(l.path(name+".kubeconfig"), "https://"+l.LBAddress(), user, l.ca.CertPEM(), c, k)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
