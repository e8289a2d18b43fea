package cloud

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/ini.v1"
	"sigs.k8s.io/yaml"
)

// ErrUnknownFormat says a file is neither a vSphere nor an OpenStack cloud config.
var ErrUnknownFormat = errors.New("not a vSphere or OpenStack cloud config")

// Parse reads a cloud config of any supported shape; src says where it came from. It decides
// the provider and format from the content: clouds.yaml (top-level "clouds"), vSphere CPI YAML
// ("global"/"vcenter"), or INI ([Global] with auth-url & co. for OpenStack; [VirtualCenter "..."],
// server, datacenters & co. for vSphere). Malformed input is an error naming what is wrong.
func Parse(data []byte, src Source) (cfg *Config, err error) {
	defer func() { // ini.v1 and yaml are third-party parsers: no panic on input escapes
		if r := recover(); r != nil {
			cfg, err = nil, fmt.Errorf("parse %s: malformed input (%v)", src, r)
		}
	}()
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("parse %s: empty file", src)
	}
	if trimmed[0] == '[' {
		return parseINI(data, src)
	}
	var top map[string]json.RawMessage
	if yerr := yaml.Unmarshal(data, &top); yerr == nil && top != nil {
		switch {
		case top["clouds"] != nil:
			return parseCloudsYAML(data, src)
		case top["vcenter"] != nil || top["global"] != nil:
			return parseVSphereYAML(data, src)
		}
		return nil, fmt.Errorf("parse %s: %w (YAML without clouds, global or vcenter)", src, ErrUnknownFormat)
	}
	return parseINI(data, src)
}

var iniOptions = ini.LoadOptions{
	InsensitiveKeys:           true, // gcfg (the providers' parser) is case-insensitive
	UnescapeValueDoubleQuotes: true,
	IgnoreContinuation:        true,
	SpaceBeforeInlineComment:  true,
	AllowShadows:              false,
}

var subsectionRE = regexp.MustCompile(`^(\S+)\s+"(.*)"$`)

// section is a gcfg section: name and optional subsection (`VirtualCenter "vc1"`).
type section struct {
	name, sub, raw string
	keys           map[string]string
}

func (s section) get(keys ...string) string {
	for _, k := range keys {
		if v, ok := s.keys[k]; ok && v != "" {
			return v
		}
	}
	return ""
}

func (s section) label() string {
	if s.sub != "" {
		return fmt.Sprintf("[%s %q]", s.name, s.sub)
	}
	return "[" + s.name + "]"
}

func loadINI(data []byte, src Source) ([]section, error) {
	f, err := ini.LoadSources(iniOptions, data)
	if err != nil {
		return nil, fmt.Errorf("parse %s as INI: %s", src, strings.TrimSpace(err.Error()))
	}
	var out []section
	for _, s := range f.Sections() {
		if s.Name() == ini.DefaultSection {
			if len(s.Keys()) > 0 {
				return nil, fmt.Errorf("parse %s as INI: key %q outside any section", src, s.Keys()[0].Name())
			}
			continue
		}
		sec := section{name: s.Name(), raw: s.Name(), keys: map[string]string{}}
		if m := subsectionRE.FindStringSubmatch(s.Name()); m != nil {
			sec.name, sec.sub = m[1], m[2]
		}
		for _, k := range s.Keys() {
			sec.keys[strings.ToLower(k.Name())] = strings.TrimSpace(k.Value())
		}
		out = append(out, sec)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("parse %s as INI: no sections", src)
	}
	return out, nil
}

func parseINI(data []byte, src Source) (*Config, error) {
	secs, err := loadINI(data, src)
	if err != nil {
		return nil, err
	}
	switch iniProvider(secs) {
	case OpenStack:
		return openStackFromINI(secs, src)
	case VSphere:
		return vsphereFromINI(secs, src)
	}
	return nil, fmt.Errorf("parse %s: %w (INI without auth-url or vCenter settings)", src, ErrUnknownFormat)
}

func iniProvider(secs []section) Provider {
	for _, s := range secs {
		n := strings.ToLower(s.name)
		switch n {
		case "virtualcenter", "workspace", "disk", "labels":
			return VSphere
		case "loadbalancer", "blockstorage", "route", "metadata", "networking":
			return OpenStack
		case "global":
			if s.get("auth-url", "application-credential-id", "use-clouds", "tenant-id", "tenant-name", "project-id", "project-name") != "" {
				return OpenStack
			}
			if s.get("server", "datacenters", "insecure-flag", "secrets-directory", "vm-uuid", "cluster-id", "soap-roundtrip-count") != "" {
				return VSphere
			}
		}
	}
	return ""
}

// flex is a scalar that YAML may spell as a string, a number or a boolean.
type flex string

func (f *flex) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flex(s)
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case nil:
		*f = ""
	case bool, float64:
		*f = flex(fmt.Sprint(x))
	default:
		return fmt.Errorf("want a scalar, got %s", truncate(string(b), 40))
	}
	return nil
}

func truthy(s string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	return err == nil && b || strings.EqualFold(strings.TrimSpace(s), "yes") || strings.EqualFold(strings.TrimSpace(s), "on")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
