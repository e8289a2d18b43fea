// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package apiserver

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// The structured authentication configuration (KEP-3331, GA in 1.34) a member reads from
// --authentication-config: the part of apiserver.config.k8s.io/v1 AuthenticationConfiguration the
// lab writes (k8s.io/apiserver pkg/apis/apiserver/v1/types.go at v0.36.3, lines 55-368).
// kube-apiserver watches the file (fsnotify, and a poll every minute) and reloads it; an edit that
// does not load or validate keeps the configuration it runs ("failed to load authentication
// config", "failed to validate authentication config"; k8s.io/kubernetes
// pkg/kubeapiserver/options/authentication.go at v1.36.3, lines 763-821). The flag is refused
// beside any --oidc-* flag (line 871), which the lab never sets.
const (
	AuthnAPIVersion = "apiserver.config.k8s.io/v1"
	AuthnKind       = "AuthenticationConfiguration"
)

// AuthenticationConfiguration is the file's content.
type AuthenticationConfiguration struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	JWT        []JWTAuthenticator `json:"jwt"`
}

// JWTAuthenticator trusts one issuer's ID tokens.
type JWTAuthenticator struct {
	Issuer        Issuer        `json:"issuer"`
	ClaimMappings ClaimMappings `json:"claimMappings"`
}

// Issuer is where the authenticator fetches discovery and the JWKS, and what it requires of a
// token's iss and aud.
type Issuer struct {
	URL string `json:"url"`
	// CertificateAuthority is the PEM bundle (content, not a path) that the issuer's serving
	// certificate chains to.
	CertificateAuthority string   `json:"certificateAuthority,omitempty"`
	Audiences            []string `json:"audiences"`
}

// ClaimMappings maps a token's claims to the user.
type ClaimMappings struct {
	Username PrefixedClaim `json:"username"`
}

// PrefixedClaim is a claim and the prefix its value gets (the prefix is required with a claim).
type PrefixedClaim struct {
	Claim  string  `json:"claim"`
	Prefix *string `json:"prefix"`
}

// NewJWTAuthentication is a configuration with one JWT authenticator: tokens of issuer url (its
// serving certificate chains to caPEM) for one of audiences, the user named by claim username
// with prefix.
func NewJWTAuthentication(url string, caPEM []byte, audiences []string, claim, prefix string) AuthenticationConfiguration {
	return AuthenticationConfiguration{APIVersion: AuthnAPIVersion, Kind: AuthnKind, JWT: []JWTAuthenticator{{
		Issuer:        Issuer{URL: url, CertificateAuthority: string(caPEM), Audiences: append([]string(nil), audiences...)},
		ClaimMappings: ClaimMappings{Username: PrefixedClaim{Claim: claim, Prefix: &prefix}},
	}}}
}

// Marshal renders the configuration as YAML.
func (c AuthenticationConfiguration) Marshal() ([]byte, error) {
	data, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("authentication configuration: %w", err)
	}
	return data, nil
}

// WriteFileAtomic replaces file with data at once: kube-apiserver never reads half an edit (a
// half-written file would count as a failed reload).
func WriteFileAtomic(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}
