// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"fmt"
	"time"
)

// Provider is a cloud provider whose credentials credwatch understands.
type Provider string

// Providers.
const (
	VSphere   Provider = "vsphere"
	OpenStack Provider = "openstack"
)

// SourceKind says where a credential lives.
type SourceKind string

// Source kinds.
const (
	SourceFile             SourceKind = "file"              // a config file read with --config
	SourceNodeFile         SourceKind = "node-file"         // a file on the control-plane nodes (hostPath), not readable from here
	SourceSecret           SourceKind = "secret"            // a Kubernetes Secret
	SourceConfigMap        SourceKind = "configmap"         // a Kubernetes ConfigMap (credentials in a ConfigMap are readable by too many)
	SourceSecretsDirectory SourceKind = "secrets-directory" // vSphere CPI's secrets-directory, parsed once at start-up
)

// Source is where a credential (or a config) lives.
type Source struct {
	Kind      SourceKind `json:"kind"`
	Path      string     `json:"path,omitempty"`
	Namespace string     `json:"namespace,omitempty"`
	Name      string     `json:"name,omitempty"`
	Key       string     `json:"key,omitempty"`
	// Section is the part of the config that holds the credential: `[Global]`,
	// `[VirtualCenter "vc1"]`, `vcenter.main`, `clouds.openstack`.
	Section string `json:"section,omitempty"`
	// Changed is when the credential last changed: the file's mtime, or the Secret's last
	// managedFields update (its creation time when it has none).
	Changed *time.Time `json:"changed,omitempty"`
}

func (s Source) String() string {
	var where string
	switch s.Kind {
	case SourceSecret, SourceConfigMap:
		where = fmt.Sprintf("%s %s/%s", s.Kind, s.Namespace, s.Name)
		if s.Key != "" {
			where += " key " + s.Key
		}
	default:
		where = string(s.Kind) + " " + s.Path
	}
	if s.Section != "" {
		where += " " + s.Section
	}
	return where
}

// Credential is one login a cloud provider consumer uses. The password never leaves the process.
type Credential struct {
	Provider Provider `json:"provider"`
	// Server is the vCenter host (vSphere) or the Keystone auth URL (OpenStack).
	Server   string `json:"server"`
	Port     string `json:"port,omitempty"`
	Username string `json:"username,omitempty"`
	UserID   string `json:"userID,omitempty"`
	// UserDomain, Project and ProjectDomain are Keystone's scoping (names or IDs as configured).
	UserDomainID      string `json:"userDomainID,omitempty"`
	UserDomainName    string `json:"userDomainName,omitempty"`
	ProjectID         string `json:"projectID,omitempty"`
	ProjectName       string `json:"projectName,omitempty"`
	ProjectDomainID   string `json:"projectDomainID,omitempty"`
	ProjectDomainName string `json:"projectDomainName,omitempty"`
	AppCredentialID   string `json:"applicationCredentialID,omitempty"`
	AppCredentialName string `json:"applicationCredentialName,omitempty"`
	Region            string `json:"region,omitempty"`
	// Insecure is the config's own insecure-flag / tls-insecure: TLS is not verified for it.
	Insecure bool   `json:"insecure,omitempty"`
	CAFile   string `json:"caFile,omitempty"`
	// PasswordSet says whether a password (or application-credential secret) was found.
	PasswordSet bool `json:"passwordSet"`
	// Source is where the username and password live; Config is the config that pointed there
	// (empty when the credential is inline in that config).
	Source Source  `json:"source"`
	Config *Source `json:"config,omitempty"`

	password string
}

// Password returns the secret part of the credential (password or application-credential secret).
func (c Credential) Password() string { return c.password }

// WithPassword returns c with its secret set.
func (c Credential) WithPassword(p string) Credential {
	c.password, c.PasswordSet = p, p != ""
	return c
}

// Account names the account for people and for rate limiting: user@server.
func (c Credential) Account() string {
	u := c.Username
	if u == "" {
		u = c.UserID
	}
	if u == "" && c.AppCredentialID != "" {
		u = "appcred:" + c.AppCredentialID
	}
	if u == "" && c.AppCredentialName != "" {
		u = "appcred:" + c.AppCredentialName
	}
	return u + "@" + c.Server
}

// SecretRef is a Secret a config names for its credentials.
type SecretRef struct {
	Provider  Provider `json:"provider"`
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	// Servers the config expects in the Secret (vSphere), for the message when keys are missing.
	Servers  []string `json:"servers,omitempty"`
	Insecure bool     `json:"insecure,omitempty"`
	Port     string   `json:"port,omitempty"`
	CAFile   string   `json:"caFile,omitempty"`
}

// Config is one parsed cloud config.
type Config struct {
	Provider    Provider     `json:"provider"`
	Format      string       `json:"format"` // ini | yaml | clouds.yaml
	Source      Source       `json:"source"`
	Credentials []Credential `json:"credentials,omitempty"`
	SecretRefs  []SecretRef  `json:"secretRefs,omitempty"`
	// SecretsDirectory is vSphere CPI's secrets-directory (files <server>.username/.password).
	SecretsDirectory string `json:"secretsDirectory,omitempty"`
	// CloudsFile and Cloud: OpenStack use-clouds (clouds.yaml path and the cloud to use).
	CloudsFile string   `json:"cloudsFile,omitempty"`
	Cloud      string   `json:"cloud,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}
