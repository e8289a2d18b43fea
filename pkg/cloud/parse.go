// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "gopkg.in/yaml.v2"

	"github.com/credwatch/credwatch/pkg/redact"
)

// ErrUnknownFormat says a file is neither a vSphere nor an OpenStack cloud config.
var ErrUnknownFormat = errors.New("not a vSphere or OpenStack cloud config")

// Parse reads a cloud config of any supported shape; src says where it came from. It decides
// the provider and format from the content: clouds.yaml (top-level "clouds"), vSphere CPI YAML
// ("global"/"vcenter"), or INI ([Global] with auth-url & co. for OpenStack; [VirtualCenter "..."],
// server, datacenters & co. for vSphere). It reads each the way its provider does (gcfg for INI,
// gopkg.in/yaml.v2 into string fields for YAML). A malformed input is a *ParseError naming the
// file, line and key, never a value.
func Parse(data []byte, src Source) (cfg *Config, err error) {
	defer func() { // gcfg panics on some escapes; no panic on input escapes, nor its text
		if r := recover(); r != nil {
			cfg, err = nil, &ParseError{Source: src, Format: "cloud config", Problem: "malformed (the parser gave up)"}
		}
	}()
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("parse %s: empty file", src)
	}
	if trimmed[0] == '[' {
		return parseINI(data, src)
	}
	var top map[string]any
	if yerr := yaml.Unmarshal(data, &top); yerr == nil && top != nil {
		_, clouds := top["clouds"]
		_, vcenter := top["vcenter"]
		_, global := top["global"]
		switch {
		case clouds:
			return parseCloudsYAML(data, src)
		case vcenter || global:
			return parseVSphereYAML(data, src)
		}
		return nil, fmt.Errorf("parse %s: %w (YAML without clouds, global or vcenter)", src, ErrUnknownFormat)
	} else if yerr != nil {
		// A file that starts like a provider's YAML gets the YAML error, not an INI one.
		if m := yamlTopRE().FindSubmatch(data); m != nil {
			return nil, yamlError(yerr, data, src, yamlFormats[string(m[1])])
		}
	}
	return parseINI(data, src)
}

// yamlTopRE finds the first key of a file whose first line that is not blank or a comment is
// a provider's top-level YAML key.
var (
	yamlTopRE   = lazyRE(`^(?:\s*(?:#.*)?\n)*(clouds|global|vcenter):(?:\s|$)`)
	yamlFormats = map[string]string{"clouds": "clouds.yaml", "global": "vSphere YAML", "vcenter": "vSphere YAML"}
)

func parseINI(data []byte, src Source) (*Config, error) {
	c, lines, err := readINI(data, src)
	if err != nil {
		return nil, err
	}
	switch iniProvider(lines) {
	case OpenStack:
		return openStackFromINI(c, lines, src), nil
	case VSphere:
		return vsphereFromINI(c, src)
	}
	return nil, fmt.Errorf("parse %s: %w (INI without auth-url or vCenter settings)", src, ErrUnknownFormat)
}

// iniProvider decides by the first section or [Global] key that only one provider uses.
func iniProvider(lines []iniLine) Provider {
	for _, l := range lines {
		switch l.section {
		case "virtualcenter", "workspace", "disk", "labels":
			return VSphere
		case "loadbalancer", "blockstorage", "route", "metadata", "networking":
			return OpenStack
		case "global":
			switch l.key {
			case "auth-url", "application-credential-id", "use-clouds", "tenant-id", "tenant-name", "user-id", "username":
				return OpenStack
			case "server", "datacenters", "insecure-flag", "secrets-directory", "vm-uuid", "cluster-id", "soap-roundtrip-count":
				return VSphere
			}
		}
	}
	return ""
}

// truthy reads a string flag the way strconv.ParseBool and gcfg's bools do.
func truthy(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	b, err := strconv.ParseBool(s)
	return err == nil && b || s == "yes" || s == "on"
}

// knownKeys are the keys the providers define: the only text from a file an error may name.
var knownKeys = tagNames([]string{"global", "vcenter", "labels", "clouds", "auth"},
	iniGlobal{}, iniVC{}, vsYAMLGlobal{}, vsYAMLVC{}, cloudYAML{}, cloudAuthYAML{})

func tagNames(base []string, types ...any) map[string]bool {
	out := map[string]bool{}
	for _, b := range base {
		out[b] = true
	}
	for _, v := range types {
		t := reflect.TypeOf(v)
		for i := range t.NumField() {
			for _, tag := range []string{"gcfg", "yaml"} {
				if name, _, _ := strings.Cut(t.Field(i).Tag.Get(tag), ","); name != "" {
					out[name] = true
				}
			}
		}
	}
	return out
}

// knownKey returns k when the providers define it, else "".
func knownKey(k string) string {
	if knownKeys[k] {
		return k
	}
	return ""
}

// ParseError is a config that does not parse as its provider would read it. It names the file,
// the line and the key, never a value (a malformed line may be a password).
type ParseError struct {
	Source  Source
	Format  string // INI, vSphere YAML, clouds.yaml
	Line    int    // 0 when not known
	Key     string // "" when not known or not a key the providers define
	Problem string // a fixed phrase, never text from the file
}

func (e *ParseError) Error() string {
	s := fmt.Sprintf("parse %s as %s", e.Source, e.Format)
	if e.Line > 0 {
		s += fmt.Sprintf(": line %d", e.Line)
	}
	if e.Key != "" {
		s += fmt.Sprintf(", key %s", e.Key)
	}
	return s + ": " + e.Problem
}

// truncate shortens s to at most n bytes, on a rune boundary, marking the cut with "...". It
// redacts s first (Text, then each of secrets): a cut inside a password leaves a piece of it
// that no redaction after the cut can recognise.
func truncate(s string, n int, secrets ...string) string {
	s = redact.Secrets(redact.Text(s), secrets...)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
