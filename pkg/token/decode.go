// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package token decodes, classifies, mints and verifies Kubernetes service-account tokens the way
// kube-apiserver does, without a cluster: Decode never trusts the token, Mint signs exactly as
// kube-apiserver (and kube-controller-manager for legacy tokens) sign, Verify reproduces the
// verdict and log message of a given kube-apiserver line, and Refresh does the kubelet's maths.
// Nothing here prints a token's signature.
package token

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/credwatch/credwatch/pkg/keys/strictjson"
)

// MaxSize is the largest token Decode accepts (kube-apiserver has no such limit, but no real
// service-account token comes near it).
const MaxSize = 64 << 10

// Algorithms kube-apiserver signs service-account tokens with.
var Algorithms = []string{"RS256", "ES256", "ES384", "ES512"}

// Decode errors. Every error Decode returns wraps exactly one of them (errors.Is).
var (
	ErrNotJWT         = errors.New("not a JWT")
	ErrTooLarge       = errors.New("token too large")
	ErrInvalidBase64  = errors.New("invalid base64url")
	ErrInvalidJSON    = errors.New("invalid JSON")
	ErrDuplicateKey   = errors.New("duplicate JSON key")
	ErrAlgNone        = errors.New(`alg "none" (unsigned token)`)
	ErrUnsupportedAlg = errors.New("unsupported alg")
	ErrInvalidClaim   = errors.New("invalid claim")
)

// DecodeError says which part of the token is bad and why.
type DecodeError struct {
	Kind   error  // one of the Err* sentinels
	Part   string // header, payload, signature, or "" for the whole token
	Detail string
}

func (e *DecodeError) Error() string {
	s := e.Kind.Error()
	if e.Part != "" {
		s += " in " + e.Part
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *DecodeError) Unwrap() error { return e.Kind }

// maxDetail bounds a DecodeError's detail: what it quotes from the token (an alg, a duplicate
// key) is clipped, so an error never repeats a large part of its input.
const maxDetail = 120

func decodeErr(kind error, part, format string, args ...any) error {
	d := fmt.Sprintf(format, args...)
	if len(d) > maxDetail {
		n := maxDetail
		for n > 0 && !utf8.RuneStart(d[n]) {
			n--
		}
		d = d[:n] + "…"
	}
	return &DecodeError{Kind: kind, Part: part, Detail: d}
}

// Header is the JOSE header (alg, kid, typ).
type Header struct {
	Algorithm string `json:"alg"`
	KeyID     string `json:"kid,omitempty"`
	Type      string `json:"typ,omitempty"`
}

// Ref names a Kubernetes object a token refers to.
type Ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// KubernetesClaims is the private "kubernetes.io" claim of a bound token (pkg/serviceaccount/claims.go).
type KubernetesClaims struct {
	Namespace      string `json:"namespace,omitempty"`
	ServiceAccount Ref    `json:"serviceaccount"`
	Pod            *Ref   `json:"pod,omitempty"`
	Secret         *Ref   `json:"secret,omitempty"`
	Node           *Ref   `json:"node,omitempty"`
	WarnAfter      *int64 `json:"warnafter,omitempty"`
}

// LegacyClaims are the private claims of a secret-based token (pkg/serviceaccount/legacy.go).
type LegacyClaims struct {
	Namespace          string `json:"kubernetes.io/serviceaccount/namespace"`
	SecretName         string `json:"kubernetes.io/serviceaccount/secret.name"`
	ServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name"`
	ServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid"`
}

// Claims are the claims credwatch interprets. Times are Unix seconds as go-jose reads them
// (fractions truncated).
type Claims struct {
	Issuer     string
	Subject    string
	Audience   []string
	Expiry     *int64
	NotBefore  *int64
	IssuedAt   *int64
	ID         string
	Kubernetes *KubernetesClaims
	Legacy     *LegacyClaims // set when any legacy private claim is present
}

// Token is a decoded, unverified JWT. It keeps the signature only for Verify; nothing renders it.
type Token struct {
	Header    Header
	Claims    Claims
	RawClaims map[string]any // the payload object as decoded (numbers as json.Number)

	signingInput string
	signature    []byte
	// crit is the header's raw "crit" value (nil when absent): Verify judges it as go-jose does.
	crit json.RawMessage
}

// SigningInput is header.payload, the part the signature covers (no signature).
func (t *Token) SigningInput() string { return t.signingInput }

// Decode parses a compact JWS without verifying it. Surrounding white space and a "Bearer "
// prefix are ignored.
func Decode(raw string) (*Token, error) {
	if len(raw) > MaxSize {
		return nil, decodeErr(ErrTooLarge, "", "%d bytes, limit %d", len(raw), MaxSize)
	}
	s := strings.TrimSpace(raw)
	s = strings.TrimSpace(strings.TrimPrefix(s, "Bearer "))
	if s == "" {
		return nil, decodeErr(ErrNotJWT, "", "empty")
	}
	if strings.HasPrefix(s, "{") {
		return nil, decodeErr(ErrNotJWT, "", "JSON, not a compact JWS (header.payload.signature)")
	}
	parts := strings.Split(s, ".")
	switch len(parts) {
	case 3:
	case 5:
		return nil, decodeErr(ErrNotJWT, "", "5 dot-separated parts: an encrypted JWE, not a signed JWS")
	default:
		return nil, decodeErr(ErrNotJWT, "", "%d dot-separated parts, want 3 (header.payload.signature)", len(parts))
	}
	hb, err := b64(parts[0], "header")
	if err != nil {
		return nil, err
	}
	pb, err := b64(parts[1], "payload")
	if err != nil {
		return nil, err
	}
	sig, err := b64(parts[2], "signature")
	if err != nil {
		return nil, err
	}
	t := &Token{signingInput: parts[0] + "." + parts[1], signature: sig}
	if err := strictObject(hb, "header", &t.Header); err != nil {
		return nil, err
	}
	var crit struct {
		Crit json.RawMessage `json:"crit"`
	}
	if err := json.Unmarshal(hb, &crit); err == nil {
		t.crit = crit.Crit
	}
	switch {
	case t.Header.Algorithm == "":
		return nil, decodeErr(ErrUnsupportedAlg, "header", "no alg")
	case strings.EqualFold(t.Header.Algorithm, "none"):
		return nil, &DecodeError{Kind: ErrAlgNone, Part: "header"}
	case !supportedAlg(t.Header.Algorithm):
		return nil, decodeErr(ErrUnsupportedAlg, "header", "%q; kube-apiserver signs with %s", t.Header.Algorithm, strings.Join(Algorithms, ", "))
	}
	if len(sig) == 0 {
		return nil, decodeErr(ErrNotJWT, "signature", "empty signature")
	}
	if err := strictObject(pb, "payload", &t.RawClaims); err != nil {
		return nil, err
	}
	if err := t.Claims.fill(t.RawClaims); err != nil {
		return nil, err
	}
	return t, nil
}

func supportedAlg(a string) bool {
	for _, s := range Algorithms {
		if a == s {
			return true
		}
	}
	return false
}

func b64(s, part string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, decodeErr(ErrInvalidBase64, part, "%v", err)
	}
	return b, nil
}

// strictObject checks data strictly and decodes it into v, which must come out a JSON object.
func strictObject(data []byte, part string, v any) error {
	if err := strictjson.Check(data); err != nil {
		var dup *strictjson.DuplicateKeyError
		if errors.As(err, &dup) {
			return decodeErr(ErrDuplicateKey, part, "%q", dup.Key)
		}
		return decodeErr(ErrInvalidJSON, part, "%s", strings.TrimPrefix(err.Error(), "invalid JSON: "))
	}
	if len(data) == 0 || strings.TrimSpace(string(data))[0] != '{' {
		return decodeErr(ErrInvalidJSON, part, "not a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return decodeErr(ErrInvalidJSON, part, "%v", err)
	}
	return nil
}

func (c *Claims) fill(m map[string]any) error {
	str := func(name string) (string, error) {
		v, ok := m[name]
		if !ok || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", decodeErr(ErrInvalidClaim, "payload", "%s is not a string", name)
		}
		return s, nil
	}
	date := func(name string) (*int64, error) {
		v, ok := m[name]
		if !ok || v == nil {
			return nil, nil
		}
		n, ok := v.(json.Number)
		if !ok {
			return nil, decodeErr(ErrInvalidClaim, "payload", "%s is not a number", name)
		}
		f, err := n.Float64()
		if err != nil || math.IsNaN(f) || math.Abs(f) > 1e15 {
			return nil, decodeErr(ErrInvalidClaim, "payload", "%s is not a NumericDate", name)
		}
		i := int64(f)
		return &i, nil
	}
	var err error
	if c.Issuer, err = str("iss"); err != nil {
		return err
	}
	if c.Subject, err = str("sub"); err != nil {
		return err
	}
	if c.ID, err = str("jti"); err != nil {
		return err
	}
	if c.Expiry, err = date("exp"); err != nil {
		return err
	}
	if c.NotBefore, err = date("nbf"); err != nil {
		return err
	}
	if c.IssuedAt, err = date("iat"); err != nil {
		return err
	}
	switch a := m["aud"].(type) {
	case nil:
	case string:
		c.Audience = []string{a}
	case []any:
		for _, e := range a {
			s, ok := e.(string)
			if !ok {
				return decodeErr(ErrInvalidClaim, "payload", "aud is not a string or a list of strings")
			}
			c.Audience = append(c.Audience, s)
		}
	default:
		return decodeErr(ErrInvalidClaim, "payload", "aud is not a string or a list of strings")
	}
	if k, ok := m["kubernetes.io"]; ok {
		b, _ := json.Marshal(k)
		var kc KubernetesClaims
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		var raw struct {
			KubernetesClaims
			WarnAfter json.Number `json:"warnafter"`
		}
		if err := dec.Decode(&raw); err != nil {
			return decodeErr(ErrInvalidClaim, "payload", "kubernetes.io: %v", err)
		}
		kc = raw.KubernetesClaims
		kc.WarnAfter = nil
		if raw.WarnAfter != "" {
			f, err := raw.WarnAfter.Float64()
			if err != nil || math.IsNaN(f) || math.Abs(f) > 1e15 {
				return decodeErr(ErrInvalidClaim, "payload", "kubernetes.io.warnafter is not a NumericDate")
			}
			w := int64(f)
			kc.WarnAfter = &w
		}
		c.Kubernetes = &kc
	}
	var lc LegacyClaims
	hasLegacy := false
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"kubernetes.io/serviceaccount/namespace", &lc.Namespace},
		{"kubernetes.io/serviceaccount/secret.name", &lc.SecretName},
		{"kubernetes.io/serviceaccount/service-account.name", &lc.ServiceAccountName},
		{"kubernetes.io/serviceaccount/service-account.uid", &lc.ServiceAccountUID},
	} {
		if _, ok := m[f.name]; ok {
			hasLegacy = true
		}
		if *f.dst, err = str(f.name); err != nil {
			return err
		}
	}
	if hasLegacy {
		c.Legacy = &lc
	}
	return nil
}

// Time converts a NumericDate pointer; the zero time for nil.
func Time(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(*n, 0).UTC()
}
