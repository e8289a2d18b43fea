// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package keys loads service-account signing keys the way kube-apiserver does (PEM files with one
// or more public or private RSA/ECDSA keys; JWKS documents), derives their key IDs exactly as
// kube-apiserver does, renders the JWKS document it serves at /openid/v1/jwks, and compares key
// sets (the core of key-drift detection).
package keys

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/credwatch/credwatch/internal/userfile"
)

// MaxFileSize bounds what LoadPEMFile and LoadJWKSFile read.
const MaxFileSize = 4 << 20

// Key is one public key, with its private half when the PEM held one.
type Key struct {
	// KeyID is the kid kube-apiserver derives (see KeyID).
	KeyID string
	// Algorithm is the JWS algorithm kube-apiserver signs with for this key: RS256 for every RSA key,
	// ES256/ES384/ES512 for ECDSA P-256/P-384/P-521; "" for a key it cannot sign with.
	Algorithm string
	// Public is *rsa.PublicKey or *ecdsa.PublicKey.
	Public crypto.PublicKey
	// Private is set when the key came from a private-key PEM block.
	Private crypto.Signer
	// Source names where the key came from (file path, URL), for messages.
	Source string
}

// ErrNoKey means a PEM input held no RSA or ECDSA key.
var ErrNoKey = errors.New("no RSA or ECDSA key found")

// KeyID returns the key ID kube-apiserver derives from a public key: the unpadded base64url
// encoding of the SHA-256 of its PKIX DER encoding (pkg/serviceaccount/jwt.go keyIDFromPublicKey).
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("serialize public key to DER: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// Algorithm returns the JWS algorithm kube-apiserver uses for pub.
func Algorithm(pub crypto.PublicKey) (string, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return "RS256", nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
		return "", fmt.Errorf("ECDSA curve %s: kube-apiserver supports P-256, P-384 and P-521", k.Curve.Params().Name)
	}
	return "", fmt.Errorf("key type %T: kube-apiserver supports RSA and ECDSA", pub)
}

// NewKey fills in KeyID and Algorithm for a public key.
func NewKey(pub crypto.PublicKey, priv crypto.Signer, source string) (Key, error) {
	alg, err := Algorithm(pub)
	if err != nil {
		return Key{}, err
	}
	kid, err := KeyID(pub)
	if err != nil {
		return Key{}, err
	}
	return Key{KeyID: kid, Algorithm: alg, Public: pub, Private: priv, Source: source}, nil
}

// ParsePEM reads every RSA and ECDSA key in data, public or private, in order, as
// kube-apiserver's --service-account-key-file does (k8s.io/client-go/util/keyutil
// ParsePublicKeysPEM): other PEM blocks are skipped; no key at all is an error naming name.
func ParsePEM(data []byte, name string) ([]Key, error) {
	var out []Key
	rest := data
	for i := 0; ; i++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		pub, priv := parseBlock(block.Bytes)
		if pub == nil {
			continue
		}
		k, err := NewKey(pub, priv, name)
		if err != nil {
			return nil, fmt.Errorf("%s: PEM block %d (%s): %w", name, i+1, block.Type, err)
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w (PEM with RSA or ECDSA public or private keys expected)", name, ErrNoKey)
	}
	return out, nil
}

// parseBlock tries the encodings keyutil tries: RSA private (PKCS#1, PKCS#8), PKIX public or
// certificate, EC private (SEC 1, PKCS#8). It returns nil for anything else.
func parseBlock(der []byte) (crypto.PublicKey, crypto.Signer) {
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return &k.PublicKey, k
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		switch k := k.(type) {
		case *rsa.PrivateKey:
			return &k.PublicKey, k
		case *ecdsa.PrivateKey:
			return &k.PublicKey, k
		}
		return nil, nil
	}
	if k, err := x509.ParsePKIXPublicKey(der); err == nil {
		switch k := k.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey:
			return k, nil
		}
		return nil, nil
	}
	if c, err := x509.ParseCertificate(der); err == nil {
		switch k := c.PublicKey.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey:
			return k, nil
		}
		return nil, nil
	}
	if k, err := x509.ParsePKCS1PublicKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return &k.PublicKey, k
	}
	return nil, nil
}

// LoadPEMFile reads path with ParsePEM. Cancelling ctx abandons a path that blocks (a FIFO).
func LoadPEMFile(ctx context.Context, path string) ([]Key, error) {
	data, err := readFile(ctx, path)
	if err != nil {
		return nil, err
	}
	return ParsePEM(data, path)
}

// LoadPEMFiles reads every path with LoadPEMFile and concatenates the keys in order, as
// kube-apiserver merges repeated --service-account-key-file flags.
func LoadPEMFiles(ctx context.Context, paths ...string) ([]Key, error) {
	var all []Key
	for _, p := range paths {
		ks, err := LoadPEMFile(ctx, p)
		if err != nil {
			return nil, err
		}
		all = append(all, ks...)
	}
	return all, nil
}

// readFile reads a file the user named, bounded to MaxFileSize; cancelling ctx abandons it.
func readFile(ctx context.Context, path string) ([]byte, error) {
	data, err := userfile.ReadFile(ctx, path, MaxFileSize)
	if err != nil && ctx.Err() != nil {
		return nil, err // "open PATH: context canceled"
	}
	if err != nil {
		return nil, fmt.Errorf("read %w", err)
	}
	return data, nil
}

// Public returns the public halves of ks (for sets that must never carry private keys).
func Public(ks []Key) []Key {
	out := make([]Key, len(ks))
	for i, k := range ks {
		k.Private = nil
		out[i] = k
	}
	return out
}

// Signers returns the keys of ks that have a private half.
func Signers(ks []Key) []Key {
	var out []Key
	for _, k := range ks {
		if k.Private != nil {
			out = append(out, k)
		}
	}
	return out
}
