// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package keys

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/json"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/credwatch/credwatch/pkg/keys/strictjson"
)

// JWKS renders the JSON Web Key Set kube-apiserver serves at /openid/v1/jwks for these keys:
// one entry per key, in order, with use "sig", alg and kid, public material only, compact JSON
// (pkg/serviceaccount/openidmetadata.go publicJWKSFromKeys). The result has no trailing newline.
func JWKS(ks []Key) ([]byte, error) {
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(ks))}
	for i, k := range ks {
		jwk := jose.JSONWebKey{Algorithm: k.Algorithm, Key: k.Public, KeyID: k.KeyID, Use: "sig"}
		if !jwk.Valid() || !jwk.IsPublic() {
			return nil, fmt.Errorf("key #%d (%s): not a valid public key", i, k.KeyID)
		}
		set.Keys = append(set.Keys, jwk)
	}
	return json.Marshal(set)
}

// ParseJWKS reads a JSON Web Key Set strictly: one JSON object without duplicate keys, a "keys"
// array, every entry a valid public RSA or ECDSA JWK. A key without "kid" gets the kid
// kube-apiserver would derive. name labels errors.
func ParseJWKS(data []byte, name string) ([]Key, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: JWKS larger than %d bytes", name, MaxFileSize)
	}
	if err := strictjson.Check(data); err != nil {
		return nil, fmt.Errorf("%s: not a JWKS document: %w", name, err)
	}
	var doc struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not a JWKS document: %w", name, err)
	}
	if doc.Keys == nil {
		return nil, fmt.Errorf("%s: not a JWKS document: no \"keys\" array", name)
	}
	out := make([]Key, 0, len(*doc.Keys))
	for i, raw := range *doc.Keys {
		if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			return nil, fmt.Errorf("%s: key #%d: not a JSON object", name, i)
		}
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("%s: key #%d: %w", name, i, err)
		}
		if !jwk.IsPublic() {
			return nil, fmt.Errorf("%s: key #%d (%s): contains private key material", name, i, jwk.KeyID)
		}
		switch jwk.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey:
		default:
			return nil, fmt.Errorf("%s: key #%d (%s): key type %T is not RSA or ECDSA", name, i, jwk.KeyID, jwk.Key)
		}
		k, err := NewKey(jwk.Key, nil, name)
		if err != nil {
			return nil, fmt.Errorf("%s: key #%d: %w", name, i, err)
		}
		if jwk.KeyID != "" {
			k.KeyID = jwk.KeyID
		}
		if jwk.Algorithm != "" {
			k.Algorithm = jwk.Algorithm
		}
		out = append(out, k)
	}
	return out, nil
}

// LoadJWKSFile reads path with ParseJWKS.
func LoadJWKSFile(ctx context.Context, path string) ([]Key, error) {
	data, err := readFile(ctx, path)
	if err != nil {
		return nil, err
	}
	return ParseJWKS(data, path)
}
