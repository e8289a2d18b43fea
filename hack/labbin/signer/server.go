// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
	externaljwtv1 "k8s.io/externaljwt/apis/v1"
)

// control is the control file (the same JSON as credwatch/pkg/lab/signer.Control).
type control struct {
	Keys                      []controlKey `json:"keys"`
	SignKeyFile               string       `json:"signKeyFile,omitempty"`
	RefreshHintSeconds        int64        `json:"refreshHintSeconds"`
	MaxTokenExpirationSeconds int64        `json:"maxTokenExpirationSeconds"`
	DataTimestamp             *time.Time   `json:"dataTimestamp,omitempty"`
	Fail                      failures     `json:"fail,omitzero"`
}

type controlKey struct {
	File                     string `json:"file"`
	ExcludeFromOIDCDiscovery bool   `json:"excludeFromOIDCDiscovery,omitempty"`
}

// failures: a non-empty message makes that RPC answer codes.Unavailable with it.
type failures struct {
	FetchKeys string `json:"fetchKeys,omitempty"`
	Sign      string `json:"sign,omitempty"`
	Metadata  string `json:"metadata,omitempty"`
}

// state is a parsed control file.
type state struct {
	c       control
	keys    []*externaljwtv1.Key
	signer  crypto.Signer // nil: no key to sign with
	signKID string
	alg     string
	dataTS  time.Time
}

type server struct {
	externaljwtv1.UnimplementedExternalJWTSignerServer
	file string
	log  *log.Logger

	mu   sync.Mutex
	raw  []byte
	st   *state
	last error
}

func newServer(file string, logger *log.Logger) *server { return &server{file: file, log: logger} }

// current reads the control file again (it is small) and parses it when its content changed.
func (s *server) current() (*state, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, err := os.ReadFile(s.file)
	if err != nil {
		return nil, fmt.Errorf("read control file: %w", err)
	}
	if s.st != nil && bytes.Equal(raw, s.raw) {
		return s.st, nil
	}
	fi, err := os.Stat(s.file)
	if err != nil {
		return nil, fmt.Errorf("read control file: %w", err)
	}
	st, err := parse(raw, fi.ModTime())
	if err != nil {
		if s.last == nil || s.last.Error() != err.Error() {
			s.log.Printf("control file %s: %v (keeping the previous one)", s.file, err)
		}
		s.last = err
		if s.st != nil {
			return s.st, nil
		}
		return nil, err
	}
	s.raw, s.st, s.last = raw, st, nil
	var kids []string
	for _, k := range st.keys {
		kid := k.KeyId
		if k.ExcludeFromOidcDiscovery {
			kid += " (excluded from OIDC discovery)"
		}
		kids = append(kids, kid)
	}
	s.log.Printf("control: keys [%s], signs with %q, refresh hint %ds, max token expiration %ds, data timestamp %s, failing %s",
		strings.Join(kids, ", "), st.signKID, st.c.RefreshHintSeconds, st.c.MaxTokenExpirationSeconds,
		st.dataTS.UTC().Format(time.RFC3339), st.c.Fail.String())
	return st, nil
}

func (f failures) String() string {
	var out []string
	for _, x := range []struct{ rpc, msg string }{{"FetchKeys", f.FetchKeys}, {"Sign", f.Sign}, {"Metadata", f.Metadata}} {
		if x.msg != "" {
			out = append(out, fmt.Sprintf("%s (%q)", x.rpc, x.msg))
		}
	}
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, ", ")
}

// parse turns a control file into what the RPCs serve; modTime is the data timestamp unless the
// file gives one.
func parse(raw []byte, modTime time.Time) (*state, error) {
	var c control
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	st := &state{c: c, dataTS: modTime}
	if c.DataTimestamp != nil {
		st.dataTS = *c.DataTimestamp
	}
	for _, k := range c.Keys {
		pub, priv, err := loadKey(k.File)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.File, err)
		}
		kid := keyID(der)
		st.keys = append(st.keys, &externaljwtv1.Key{KeyId: kid, Key: der, ExcludeFromOidcDiscovery: k.ExcludeFromOIDCDiscovery})
		if st.signer == nil && c.SignKeyFile == "" && priv != nil && !k.ExcludeFromOIDCDiscovery {
			st.signer, st.signKID = priv, kid
		}
	}
	if c.SignKeyFile != "" {
		pub, priv, err := loadKey(c.SignKeyFile)
		if err != nil {
			return nil, err
		}
		if priv == nil {
			return nil, fmt.Errorf("signKeyFile %s: not a private key", c.SignKeyFile)
		}
		der, err := x509.MarshalPKIXPublicKey(pub)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.SignKeyFile, err)
		}
		st.signer, st.signKID = priv, keyID(der)
	}
	if st.signer != nil {
		alg, err := algorithm(st.signer)
		if err != nil {
			return nil, err
		}
		st.alg = alg
	}
	return st, nil
}

// keyID is kube-apiserver's key id for a public key: base64url(SHA-256(PKIX DER)), unpadded
// (k8s.io/kubernetes pkg/serviceaccount/jwt.go keyIDFromPublicKey).
func keyID(der []byte) string {
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// loadKey reads a PEM file holding one private key (PKCS#1, PKCS#8 or SEC 1) or public key
// (PKIX or PKCS#1); priv is nil for a public key.
func loadKey(file string) (crypto.PublicKey, crypto.Signer, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("key: %w", err)
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, nil, fmt.Errorf("key %s: no PEM key found", file)
		}
		switch b.Type {
		case "RSA PRIVATE KEY":
			k, err := x509.ParsePKCS1PrivateKey(b.Bytes)
			if err != nil {
				return nil, nil, fmt.Errorf("key %s: %w", file, err)
			}
			return k.Public(), k, nil
		case "EC PRIVATE KEY":
			k, err := x509.ParseECPrivateKey(b.Bytes)
			if err != nil {
				return nil, nil, fmt.Errorf("key %s: %w", file, err)
			}
			return k.Public(), k, nil
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				return nil, nil, fmt.Errorf("key %s: %w", file, err)
			}
			signer, ok := k.(crypto.Signer)
			if !ok {
				return nil, nil, fmt.Errorf("key %s: %T cannot sign", file, k)
			}
			return signer.Public(), signer, nil
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(b.Bytes)
			if err != nil {
				return nil, nil, fmt.Errorf("key %s: %w", file, err)
			}
			return k, nil, nil
		case "RSA PUBLIC KEY":
			k, err := x509.ParsePKCS1PublicKey(b.Bytes)
			if err != nil {
				return nil, nil, fmt.Errorf("key %s: %w", file, err)
			}
			return k, nil, nil
		}
	}
}

// algorithm is the JWS algorithm kube-apiserver accepts for the key (RS256, ES256/384/512).
func algorithm(k crypto.Signer) (string, error) {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return "RS256", nil
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
	}
	return "", fmt.Errorf("signing key %T: kube-apiserver accepts only RSA and ECDSA P-256/384/521", k)
}

// serving is the state an RPC answers from, or the codes.Unavailable status it fails with: the
// control file cannot be read, or fail (of the control file's Fail) says so.
func (s *server) serving(rpc string, fail func(failures) string) (*state, error) {
	st, err := s.current()
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	if msg := fail(st.c.Fail); msg != "" {
		s.log.Printf("%s: failing as told: %s", rpc, msg)
		return nil, status.Error(codes.Unavailable, msg)
	}
	return st, nil
}

// Sign signs base64url(header) + "." + claims with the signing key.
func (s *server) Sign(_ context.Context, req *externaljwtv1.SignJWTRequest) (*externaljwtv1.SignJWTResponse, error) {
	st, err := s.serving("Sign", func(f failures) string { return f.Sign })
	if err != nil {
		return nil, err
	}
	if st.signer == nil {
		return nil, status.Error(codes.FailedPrecondition, "no signing key")
	}
	hdr, err := json.Marshal(struct {
		Alg string `json:"alg"`
		KID string `json:"kid"`
		Typ string `json:"typ"`
	}{st.alg, st.signKID, "JWT"})
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	header := base64.RawURLEncoding.EncodeToString(hdr)
	sig, err := sign(st.signer, []byte(header+"."+req.GetClaims()))
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	s.log.Printf("Sign: kid %s (%s)", st.signKID, st.alg)
	return &externaljwtv1.SignJWTResponse{Header: header, Signature: base64.RawURLEncoding.EncodeToString(sig)}, nil
}

// sign is the JWS signature of input: RSASSA-PKCS1-v1_5 with SHA-256, or ECDSA as r||s with the
// curve's hash (RFC 7518 §3.3, §3.4).
func sign(k crypto.Signer, input []byte) ([]byte, error) {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		sum := sha256.Sum256(input)
		return rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
	case *ecdsa.PrivateKey:
		var h crypto.Hash
		switch k.Curve {
		case elliptic.P256():
			h = crypto.SHA256
		case elliptic.P384():
			h = crypto.SHA384
		default:
			h = crypto.SHA512
		}
		hh := h.New()
		hh.Write(input)
		r, ss, err := ecdsa.Sign(rand.Reader, k, hh.Sum(nil))
		if err != nil {
			return nil, err
		}
		n := (k.Curve.Params().BitSize + 7) / 8
		out := make([]byte, 2*n)
		r.FillBytes(out[:n])
		ss.FillBytes(out[n:])
		return out, nil
	}
	return nil, errors.New("unsupported key")
}

// FetchKeys returns the control file's keys.
func (s *server) FetchKeys(context.Context, *externaljwtv1.FetchKeysRequest) (*externaljwtv1.FetchKeysResponse, error) {
	st, err := s.serving("FetchKeys", func(f failures) string { return f.FetchKeys })
	if err != nil {
		return nil, err
	}
	s.log.Printf("FetchKeys: %d keys, refresh hint %ds", len(st.keys), st.c.RefreshHintSeconds)
	return &externaljwtv1.FetchKeysResponse{Keys: st.keys, DataTimestamp: timestamppb.New(st.dataTS), RefreshHintSeconds: st.c.RefreshHintSeconds}, nil
}

// Metadata returns the control file's max token expiration.
func (s *server) Metadata(context.Context, *externaljwtv1.MetadataRequest) (*externaljwtv1.MetadataResponse, error) {
	st, err := s.serving("Metadata", func(f failures) string { return f.Metadata })
	if err != nil {
		return nil, err
	}
	s.log.Printf("Metadata: max token expiration %ds", st.c.MaxTokenExpirationSeconds)
	return &externaljwtv1.MetadataResponse{MaxTokenExpirationSeconds: st.c.MaxTokenExpirationSeconds}, nil
}
