// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"errors"
	"strconv"
	"strings"

	yaml "gopkg.in/yaml.v2"
)

// vsYAML is vSphere CPI's YAML config as the provider decodes it (pkg/common/config
// CommonConfigYAML, with gopkg.in/yaml.v2): string fields keep a scalar's text as written, so
// `password: 0123` is "0123" and `password: yes` is "yes"; port and the flags are typed as there,
// so a value the provider rejects is rejected here.
type vsYAML struct {
	Global  vsYAMLGlobal         `yaml:"global"`
	VCenter map[string]*vsYAMLVC `yaml:"vcenter"`
	Labels  struct {
		Zone   string `yaml:"zone"`
		Region string `yaml:"region"`
	} `yaml:"labels"`
}

// vsYAMLGlobal is GlobalYAML: a vCenter's keys and the global-only ones.
type vsYAMLGlobal struct {
	vsYAMLVC         `yaml:",inline"`
	SecretsDirectory string `yaml:"secretsDirectory"`
	APIDisable       bool   `yaml:"apiDisable"`
	APIBinding       string `yaml:"apiBinding"`
}

// vsYAMLVC is VirtualCenterConfigYAML.
type vsYAMLVC struct {
	User            string   `yaml:"user"`
	Password        string   `yaml:"password"`
	Server          string   `yaml:"server"`
	Port            uint     `yaml:"port"`
	InsecureFlag    bool     `yaml:"insecureFlag"`
	Datacenters     []string `yaml:"datacenters"`
	RoundTripCount  uint     `yaml:"soapRoundtripCount"`
	CAFile          string   `yaml:"caFile"`
	Thumbprint      string   `yaml:"thumbprint"`
	SecretName      string   `yaml:"secretName"`
	SecretNamespace string   `yaml:"secretNamespace"`
	IPFamily        []string `yaml:"ipFamily"`
}

// cloudsYAML is OpenStack's clouds.yaml as gophercloud's clientconfig decodes it: string
// fields, verify a bool.
type cloudsYAML struct {
	Clouds map[string]*cloudYAML `yaml:"clouds"`
}

type cloudYAML struct {
	Auth               cloudAuthYAML `yaml:"auth"`
	AuthType           string        `yaml:"auth_type"`
	RegionName         string        `yaml:"region_name"`
	Interface          string        `yaml:"interface"`
	IdentityAPIVersion string        `yaml:"identity_api_version"`
	Verify             *bool         `yaml:"verify"`
	CACert             string        `yaml:"cacert"`
}

type cloudAuthYAML struct {
	AuthURL                     string `yaml:"auth_url"`
	Token                       string `yaml:"token"`
	Username                    string `yaml:"username"`
	UserID                      string `yaml:"user_id"`
	Password                    string `yaml:"password"`
	ProjectName                 string `yaml:"project_name"`
	ProjectID                   string `yaml:"project_id"`
	UserDomainName              string `yaml:"user_domain_name"`
	UserDomainID                string `yaml:"user_domain_id"`
	ProjectDomainName           string `yaml:"project_domain_name"`
	ProjectDomainID             string `yaml:"project_domain_id"`
	DomainName                  string `yaml:"domain_name"`
	DomainID                    string `yaml:"domain_id"`
	DefaultDomain               string `yaml:"default_domain"`
	ApplicationCredentialID     string `yaml:"application_credential_id"`
	ApplicationCredentialName   string `yaml:"application_credential_name"`
	ApplicationCredentialSecret string `yaml:"application_credential_secret"`
}

// decodeYAML decodes data into v as the providers do; an error names the file, line and key.
func decodeYAML(data []byte, v any, src Source, format string) error {
	if err := yaml.Unmarshal(data, v); err != nil {
		return yamlError(err, data, src, format)
	}
	return nil
}

var (
	yamlLineRE = lazyRE(`line (\d+): (.*)`)
	yamlTypeRE = lazyRE(`cannot unmarshal (!!\w+)`)
	yamlKeyRE  = lazyRE(`^\s*(?:-\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*:`)
	// yamlProblemRE is the shape of libyaml's fixed problem phrases ("mapping values are not
	// allowed in this context", "did not find expected ',' or ']'"); other text is not quoted.
	yamlProblemRE = lazyRE(`^[a-z][a-zA-Z ,':\[\]{}<>-]*$`)
)

// yamlError keeps the line, the key and a fixed phrase of a yaml.v2 error: its type errors
// quote the value ("cannot unmarshal !!str `S3cr3t` into uint").
func yamlError(err error, data []byte, src Source, format string) error {
	pe := &ParseError{Source: src, Format: format, Problem: "not valid YAML"}
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	m := yamlLineRE().FindStringSubmatch(msg)
	if m == nil {
		return pe
	}
	pe.Line, _ = strconv.Atoi(m[1])
	if lines := strings.Split(string(data), "\n"); pe.Line >= 1 && pe.Line <= len(lines) {
		if k := yamlKeyRE().FindStringSubmatch(lines[pe.Line-1]); k != nil {
			pe.Key = knownKey(k[1])
		}
	}
	switch {
	case te != nil:
		pe.Problem = "wrong type: want " + wantType(m[2])
		if t := yamlTypeRE().FindStringSubmatch(m[2]); t != nil {
			pe.Problem += ", got " + t[1]
		}
		if len(te.Errors) > 1 {
			pe.Problem += " (and " + strconv.Itoa(len(te.Errors)-1) + " more)"
		}
	case yamlProblemRE().MatchString(m[2]):
		pe.Problem = m[2]
	}
	return pe
}

// wantType names the Go type at the end of a yaml.v2 type error for people.
func wantType(msg string) string {
	i := strings.LastIndex(msg, " into ")
	if i < 0 {
		return "another type"
	}
	switch t := msg[i+len(" into "):]; {
	case t == "string":
		return "a string"
	case t == "bool" || t == "*bool":
		return "true or false"
	case strings.HasPrefix(t, "uint") || strings.HasPrefix(t, "int"):
		return "a whole number"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	default:
		return "a mapping"
	}
}
