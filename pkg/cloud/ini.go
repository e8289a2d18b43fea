// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"strconv"
	"strings"

	gcfg "gopkg.in/gcfg.v1"
)

// iniConfig is an INI cloud config as the providers read it: gcfg.v1 v1.2.3 (what in-tree
// vSphere and OpenStack, vSphere CPI/CSI, OCCM and cinder-csi use) into string, bool and uint
// fields named by the same gcfg tags, unknown sections and keys ignored (gcfg.FatalOnly). So an
// unquoted `0123`, `yes` or 20-digit password stays the string the provider sees, `;` and `#`
// start a comment as they do there, and a value the provider rejects is rejected here.
type iniConfig struct {
	Global        iniGlobal
	VirtualCenter map[string]*iniVC
}

// iniGlobal is the union of the providers' [Global] keys that credwatch reads: a vCenter's
// keys (vSphere GlobalINI repeats VirtualCenterConfigINI's) and OpenStack's.
type iniGlobal struct {
	iniVC
	// vSphere: in-tree vsphere.conf, CPI and CSI (pkg/common/config GlobalINI).
	SecretsDirectory string `gcfg:"secrets-directory"`
	VMUUID           string `gcfg:"vm-uuid"`
	ClusterID        string `gcfg:"cluster-id"`
	// OpenStack: OCCM and cinder-csi (pkg/client AuthOpts), in-tree openstack.
	AuthURL                     string `gcfg:"auth-url"`
	Username                    string `gcfg:"username"`
	UserID                      string `gcfg:"user-id"`
	TenantID                    string `gcfg:"tenant-id"`
	TenantName                  string `gcfg:"tenant-name"`
	TrustID                     string `gcfg:"trust-id"`
	DomainID                    string `gcfg:"domain-id"`
	DomainName                  string `gcfg:"domain-name"`
	TenantDomainID              string `gcfg:"tenant-domain-id"`
	TenantDomainName            string `gcfg:"tenant-domain-name"`
	UserDomainID                string `gcfg:"user-domain-id"`
	UserDomainName              string `gcfg:"user-domain-name"`
	Region                      string `gcfg:"region"`
	TLSInsecure                 string `gcfg:"tls-insecure"`
	UseClouds                   bool   `gcfg:"use-clouds"`
	CloudsFile                  string `gcfg:"clouds-file"`
	Cloud                       string `gcfg:"cloud"`
	ApplicationCredentialID     string `gcfg:"application-credential-id"`
	ApplicationCredentialName   string `gcfg:"application-credential-name"`
	ApplicationCredentialSecret string `gcfg:"application-credential-secret"`
}

// iniVC is a [VirtualCenter "name"] section (pkg/common/config VirtualCenterConfigINI); [Global]
// has the same keys. password is also OpenStack's, ca-file and secret-name/-namespace too.
type iniVC struct {
	User            string `gcfg:"user"`
	Password        string `gcfg:"password"`
	Server          string `gcfg:"server"`
	Port            string `gcfg:"port"`
	InsecureFlag    bool   `gcfg:"insecure-flag"`
	Datacenters     string `gcfg:"datacenters"`
	RoundTripCount  uint   `gcfg:"soap-roundtrip-count"`
	CAFile          string `gcfg:"ca-file"`
	SecretName      string `gcfg:"secret-name"`
	SecretNamespace string `gcfg:"secret-namespace"`
}

// iniLine is what one line of an INI file declares: the section it is in and the key it sets.
type iniLine struct {
	section, key string // lower case; key is "" on a section header, comment or blank line
}

var (
	iniHeaderRE = lazyRE(`^\s*\[\s*([\p{L}\p{N}-]+)`)
	iniKeyRE    = lazyRE(`^\s*([\p{L}][\p{L}\p{N}-]*)\s*(?:=|$|;|#)`)
	// iniKeyStartRE is a key at the start of a line whatever follows (for a malformed line).
	iniKeyStartRE = lazyRE(`^\s*([\p{L}][\p{L}\p{N}-]*)`)
)

// outlineINI lists per line (index 0 is line 1) the section and the key.
func outlineINI(data []byte) []iniLine {
	var out []iniLine
	sect := ""
	for _, l := range strings.Split(string(data), "\n") {
		if m := iniHeaderRE().FindStringSubmatch(l); m != nil {
			sect = strings.ToLower(m[1])
			out = append(out, iniLine{section: sect})
			continue
		}
		var key string
		if m := iniKeyRE().FindStringSubmatch(l); m != nil {
			key = strings.ToLower(m[1])
		}
		out = append(out, iniLine{section: sect, key: key})
	}
	return out
}

// readINI parses data with gcfg; an error names the file, line and key, never a value.
func readINI(data []byte, src Source) (*iniConfig, []iniLine, error) {
	lines := outlineINI(data)
	var c iniConfig
	if err := gcfg.FatalOnly(gcfg.ReadStringInto(&c, string(data))); err != nil {
		return nil, nil, iniError(err.Error(), data, lines, src)
	}
	return &c, lines, nil
}

var (
	gcfgPosRE  = lazyRE(`^(\d+):\d+: `)
	gcfgSectRE = lazyRE(` at section "([\p{L}\p{N}-]+)"`)
	gcfgVarRE  = lazyRE(`, variable "([\p{L}\p{N}-]+)"$`)
)

// gcfgProblems are gcfg's own fixed messages, longest first; anything else is described, not quoted.
var gcfgProblems = []string{
	"expected section header or variable declaration", "expected subsection name or right bracket",
	"unquoted '\\' must be followed by new line or double quote", "blank value not supported for type",
	"expected EOL, EOF, or comment", "expected section header", "expected right bracket",
	"expected section name", "empty subsection name", "expected '='", "expected value",
	"illegal character NUL", "illegal UTF-8 encoding", "unknown escape sequence", "string not terminated",
}

// iniError turns a gcfg error into a ParseError: gcfg quotes values ("failed to parse \"x\" as
// bool", "illegal character U+0022"), so only its position, key and a fixed phrase are kept.
func iniError(msg string, data []byte, lines []iniLine, src Source) error {
	pe := &ParseError{Source: src, Format: "INI", Problem: "malformed"}
	if m := gcfgPosRE().FindStringSubmatch(msg); m != nil {
		pe.Line, _ = strconv.Atoi(m[1])
		if pe.Line >= 1 && pe.Line <= len(lines) {
			if k := iniKeyStartRE().FindStringSubmatch(strings.Split(string(data), "\n")[pe.Line-1]); k != nil {
				pe.Key = strings.ToLower(k[1])
			}
		}
	} else if s, v := gcfgSectRE().FindStringSubmatch(msg), gcfgVarRE().FindStringSubmatch(msg); s != nil && v != nil {
		sect, key := strings.ToLower(s[1]), strings.ToLower(v[1])
		pe.Key = key
		for i := len(lines) - 1; i >= 0; i-- { // gcfg keeps the last value: report that line
			if lines[i].section == sect && lines[i].key == key {
				pe.Line = i + 1
				break
			}
		}
	}
	switch {
	case strings.Contains(msg, "illegal character"):
		pe.Problem = "illegal character"
	case strings.Contains(msg, " as bool"):
		pe.Problem = "not a boolean (true/false, yes/no, on/off, 1/0)"
	case strings.Contains(msg, " as int") || strings.Contains(msg, "strconv."):
		pe.Problem = "not a whole number"
	default:
		for _, p := range gcfgProblems {
			if strings.Contains(msg, p) {
				pe.Problem = p
				break
			}
		}
	}
	pe.Key = knownKey(pe.Key)
	return pe
}
