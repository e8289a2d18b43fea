// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package input

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/keys"
)

// The inputs of the external-signer and authentication-configuration predictions.
//
// A JWKS document (a JSON object with a "keys" array and no kind) is the public key set of its
// side's members: for members that run --service-account-signing-endpoint, what their signer's
// FetchKeys returns; for members that run key files, what they serve at /openid/v1/jwks
// (kubectl get --raw /openid/v1/jwks). Private members of a key (d, p, q, dp, dq, qi, oth) are
// dropped where the document is read, and a note says so without them.
//
// An AuthenticationConfiguration (apiserver.config.k8s.io, KEP-3331) is the file a member's
// --authentication-config names, given as an input document; for a KubeadmControlPlane it is
// read from spec.kubeadmConfigSpec.files[].content. preflight never reads a host path a manifest
// names.

// JWKS is a public key set given as an input document.
type JWKS struct {
	Object
	// Keys are public only: a private member of the document never reaches them.
	Keys []keys.Key
}

// KeyIDs are the kids of the set, in its order.
func (j JWKS) KeyIDs() []string {
	out := make([]string, 0, len(j.Keys))
	for _, k := range j.Keys {
		out = append(out, k.KeyID)
	}
	return out
}

// privateJWK are the members of a JWK that hold private key material (RFC 7518 §6.2.2, §6.3.2).
var privateJWK = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// isJWKS reports whether doc, a document without kind, is a JWKS: an object with "keys".
func isJWKS(doc []byte) bool {
	var d struct {
		Keys *json.RawMessage `json:"keys"`
	}
	return yaml.Unmarshal(doc, &d) == nil && d.Keys != nil
}

// ParseJWKS reads a JWKS document (JSON or YAML): its public keys, and a note when private
// members were dropped (never their values). A symmetric key ("k") is refused.
func ParseJWKS(name string, doc []byte) ([]keys.Key, string, error) {
	var set struct {
		Keys []map[string]json.RawMessage `json:"keys"`
	}
	if err := yaml.Unmarshal(doc, &set); err != nil {
		return nil, "", fmt.Errorf("JWKS: malformed: %w", err)
	}
	var dropped []string
	for i, k := range set.Keys {
		if _, ok := k["k"]; ok {
			return nil, "", fmt.Errorf("JWKS: key #%d: a symmetric key (\"k\"): not a service-account key", i)
		}
		held := false
		for _, m := range privateJWK {
			if _, ok := k[m]; ok {
				delete(k, m)
				held = true
			}
		}
		if held {
			dropped = append(dropped, "#"+fmt.Sprint(i))
		}
	}
	pub, err := json.Marshal(set)
	if err != nil {
		return nil, "", fmt.Errorf("JWKS: %w", err)
	}
	ks, err := keys.ParseJWKS(pub, name)
	if err != nil {
		return nil, "", err
	}
	if len(ks) == 0 {
		return nil, "", errors.New("JWKS: no keys")
	}
	note := ""
	if len(dropped) > 0 {
		note = fmt.Sprintf("JWKS in %s: key %s held private key material; it was dropped where read and is not used or printed (give public keys only)", name, strings.Join(dropped, ", "))
	}
	return ks, note, nil
}

func (s *Set) addJWKS(obj Object, doc []byte) error {
	ks, note, err := ParseJWKS(obj.File, doc)
	if err != nil {
		return err
	}
	for i := range ks {
		ks[i].Private = nil
	}
	obj.Kind = "JWKS"
	s.JWKS = append(s.JWKS, JWKS{Object: obj, Keys: ks})
	if note != "" {
		s.Notes = append(s.Notes, note)
	}
	return nil
}

// AddKeys adds ks as a JWKS of this side named file, public halves only: what a caller that
// holds the keys themselves (a lab scenario and its signer's key files) gives in place of a
// JWKS document.
func (s *Set) AddKeys(file string, ks []keys.Key) {
	pub := make([]keys.Key, len(ks))
	for i, k := range ks {
		k.Private = nil
		pub[i] = k
	}
	s.Files = append(s.Files, file)
	s.JWKS = append(s.JWKS, JWKS{Object: Object{File: file, Kind: "JWKS"}, Keys: pub})
}

// AuthnConfig is the part of an AuthenticationConfiguration the predictions read: the issuer
// URL of each JWT authenticator (k8s.io/apiserver pkg/apis/apiserver/v1/types.go at v0.36.3).
type AuthnConfig struct {
	Object
	Issuers []string
}

// authnVersions are the apiserver.config.k8s.io versions that carry AuthenticationConfiguration.
var authnVersions = []string{"apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1", "apiserver.config.k8s.io/v1alpha1"}

// ParseAuthnConfig reads an AuthenticationConfiguration document into obj's AuthnConfig.
func ParseAuthnConfig(obj Object, doc []byte) (AuthnConfig, error) {
	var c struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		JWT        []struct {
			Issuer struct {
				URL string `json:"url"`
			} `json:"issuer"`
		} `json:"jwt"`
	}
	if err := yaml.Unmarshal(doc, &c); err != nil {
		return AuthnConfig{}, fmt.Errorf("malformed: %w", err)
	}
	if c.Kind != "AuthenticationConfiguration" || !slices.Contains(authnVersions, c.APIVersion) {
		return AuthnConfig{}, fmt.Errorf("apiVersion %q kind %q: not an AuthenticationConfiguration (%s)", c.APIVersion, c.Kind, strings.Join(authnVersions, ", "))
	}
	out := AuthnConfig{Object: obj}
	out.Kind = "AuthenticationConfiguration"
	for _, j := range c.JWT {
		out.Issuers = append(out.Issuers, j.Issuer.URL)
	}
	return out, nil
}

func parseAuthn(s *Set, obj Object, h header, doc []byte) error {
	c, err := ParseAuthnConfig(obj, doc)
	if err != nil {
		return err
	}
	s.AuthnConfigs = append(s.AuthnConfigs, c)
	return nil
}

// Patches is the patches directory of a kubeadm InitConfiguration or JoinConfiguration.
type Patches struct {
	Directory string `json:"directory,omitempty"`
}

// NodeConfiguration is the part of a kubeadm InitConfiguration or JoinConfiguration the
// predictions read.
type NodeConfiguration struct {
	Patches *Patches `json:"patches,omitempty"`
}

// PatchDir is the patches directory c names, "" for none.
func (c *NodeConfiguration) PatchDir() string {
	if c == nil || c.Patches == nil {
		return ""
	}
	return c.Patches.Directory
}
