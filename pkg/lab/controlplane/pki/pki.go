// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package pki is the lab's certificate authority and key material: the CA that signs every
// serving and client certificate, the service-account signing keys, and kubeconfig files.
package pki

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
)

// CA is the lab's certificate authority.
type CA struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
}

// NewCA makes a fresh ECDSA P-256 CA, valid for ten years.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "credwatch-lab-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	return &CA{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// LoadOrCreateCA loads the CA from certFile and keyFile, or creates one and writes both files
// when either is missing.
func LoadOrCreateCA(certFile, keyFile string) (*CA, error) {
	if exists(certFile) && exists(keyFile) {
		return LoadCA(certFile, keyFile)
	}
	c, err := NewCA()
	if err != nil {
		return nil, err
	}
	keyPEM, err := marshalSigner(c.key)
	if err != nil {
		return nil, err
	}
	return c, WritePair(certFile, keyFile, c.certPEM, keyPEM)
}

// LoadCA reads a CA certificate and its private key (PEM).
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("read CA certificate: %w", err)
	}
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return nil, fmt.Errorf("CA certificate %s: no PEM block", certFile)
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate %s: %w", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("read CA key: %w", err)
	}
	key, err := parsePrivateKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA key %s: %w", keyFile, err)
	}
	return &CA{cert: cert, key: key, certPEM: certPEM}, nil
}

// CertPEM is the CA certificate (PEM); the caller may not modify it.
func (c *CA) CertPEM() []byte { return c.certPEM }

// Pool is a certificate pool holding only this CA.
func (c *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.cert)
	return p
}

// Issue signs a leaf certificate; serving certificates get SANs, client certificates get orgs.
func (c *CA) Issue(cn string, orgs []string, ips []net.IP, dns []string, server bool) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key for %s: %w", cn, err)
	}
	usage := x509.ExtKeyUsageClientAuth
	if server {
		usage = x509.ExtKeyUsageServerAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(5 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
		DNSNames:     dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, key.Public(), c.key)
	if err != nil {
		return nil, nil, fmt.Errorf("sign certificate for %s: %w", cn, err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal key for %s: %w", cn, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

func marshalSigner(key crypto.Signer) ([]byte, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, fmt.Errorf("marshal key: %w", err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
	case *rsa.PrivateKey:
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	}
	return nil, fmt.Errorf("unsupported key type %T", key)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// NewSAKey writes a fresh RSA-2048 service-account key pair (PKCS#1 private, PKIX public).
func NewSAKey(keyFile, pubFile string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return fmt.Errorf("write service-account key: %w", err)
	}
	return writePublicKey(key.Public(), pubFile)
}

// PublicFromPrivate writes the public half of the PEM private key in keyFile to pubFile.
func PublicFromPrivate(keyFile, pubFile string) error {
	data, err := os.ReadFile(keyFile)
	if err != nil {
		return fmt.Errorf("read service-account key: %w", err)
	}
	key, err := parsePrivateKey(data)
	if err != nil {
		return fmt.Errorf("service-account key %s: %w", keyFile, err)
	}
	return writePublicKey(key.Public(), pubFile)
}

func writePublicKey(pub crypto.PublicKey, pubFile string) error {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return fmt.Errorf("marshal public key: %w", err)
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
		return fmt.Errorf("write public key: %w", err)
	}
	return nil
}

func parsePrivateKey(data []byte) (crypto.Signer, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, fmt.Errorf("no PEM private key")
		}
		switch b.Type {
		case "RSA PRIVATE KEY":
			return x509.ParsePKCS1PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			return x509.ParseECPrivateKey(b.Bytes)
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				return nil, err
			}
			s, ok := k.(crypto.Signer)
			if !ok {
				return nil, fmt.Errorf("unsupported private key type %T", k)
			}
			return s, nil
		}
	}
}

// KeyIDFromPublicKeyFile is the "kid" kube-apiserver puts in the tokens it signs with the key
// whose public half is the first key in the PEM file (keys.KeyID).
func KeyIDFromPublicKeyFile(pubFile string) (string, error) {
	ks, err := keys.LoadPEMFile(context.Background(), pubFile)
	if err != nil {
		return "", fmt.Errorf("public key: %w", err)
	}
	return ks[0].KeyID, nil
}

// WritePair writes a certificate (0644) and its key (0600).
func WritePair(certFile, keyFile string, certPEM, keyPEM []byte) error {
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", certFile, err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", keyFile, err)
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
