// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/credwatch/credwatch/pkg/limits"
)

// DefaultSecretsDirectory is vSphere CPI's default secrets-directory.
const DefaultSecretsDirectory = "/etc/cloud/credentials"

// vc is one vCenter as a config describes it, before deciding where its credentials live.
type vc struct {
	server, port, user, password, caFile string
	insecure                             bool
	secretName, secretNamespace          string
	section                              string
}

type vsGlobal struct {
	vc
	secretsDirectory string
}

// vsphereFromINI handles in-tree vsphere.conf (≤1.29), kubespray's cloud_config and CPI/CSI INI.
func vsphereFromINI(c *iniConfig, src Source) (*Config, error) {
	gi := c.Global
	g := vsGlobal{vc: vc{server: gi.Server, port: gi.Port, user: gi.User, password: gi.Password, caFile: gi.CAFile,
		insecure: gi.InsecureFlag, secretName: gi.SecretName, secretNamespace: gi.SecretNamespace, section: "[Global]"},
		secretsDirectory: gi.SecretsDirectory}
	var vcs []vc
	for _, name := range sortedKeys(c.VirtualCenter) {
		if name == "" {
			return nil, fmt.Errorf("parse %s: section [VirtualCenter] needs a server name: [VirtualCenter \"host\"]", src)
		}
		e := c.VirtualCenter[name]
		v := g.vc
		if e.User != "" || e.Password != "" || e.SecretName != "" {
			v.section = fmt.Sprintf("[VirtualCenter %q]", name)
		}
		// The section's name is the server unless the section sets one (then the name is a
		// tenant label, as CPI reads it); the flag and the rest fall back to [Global].
		v.server = or(e.Server, name)
		v.insecure = e.InsecureFlag || g.insecure
		inherit(&v, e.Port, e.User, e.Password, e.CAFile, e.SecretName, e.SecretNamespace)
		vcs = append(vcs, v)
	}
	if len(vcs) == 0 && g.server != "" {
		vcs = append(vcs, g.vc)
	}
	return vsphereConfig(src, "ini", g, vcs), nil
}

// inherit sets what a vCenter section sets over what it inherited.
func inherit(v *vc, port, user, password, caFile, secretName, secretNamespace string) {
	for dst, x := range map[*string]string{&v.port: port, &v.user: user, &v.password: password, &v.caFile: caFile,
		&v.secretName: secretName, &v.secretNamespace: secretNamespace} {
		if x != "" {
			*dst = x
		}
	}
}

func portString(p uint) string {
	if p == 0 {
		return ""
	}
	return strconv.FormatUint(uint64(p), 10)
}

// parseVSphereYAML handles vSphere CPI's YAML config (global: / vcenter: <name>: server: ...).
func parseVSphereYAML(data []byte, src Source) (*Config, error) {
	var y vsYAML
	if err := decodeYAML(data, &y, src, "vSphere YAML"); err != nil {
		return nil, err
	}
	gy := y.Global
	g := vsGlobal{vc: vc{server: gy.Server, port: portString(gy.Port), user: gy.User,
		password: gy.Password, caFile: gy.CAFile, insecure: gy.InsecureFlag,
		secretName: gy.SecretName, secretNamespace: gy.SecretNamespace, section: "global"},
		secretsDirectory: gy.SecretsDirectory}
	var vcs []vc
	for _, n := range sortedKeys(y.VCenter) {
		e := y.VCenter[n]
		if e == nil {
			e = &vsYAMLVC{}
		}
		v := g.vc
		v.section = "vcenter." + n
		v.server = or(e.Server, n)
		v.insecure = e.InsecureFlag || g.insecure
		inherit(&v, portString(e.Port), e.User, e.Password, e.CAFile, e.SecretName, e.SecretNamespace)
		vcs = append(vcs, v)
	}
	if len(vcs) == 0 && g.server != "" {
		vcs = append(vcs, g.vc)
	}
	return vsphereConfig(src, "yaml", g, vcs), nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// vsphereConfig decides, per vCenter, where its credentials come from: a Secret named by the
// vCenter's own or the global secret-name/secret-namespace (the Secret wins over an inline user,
// as in-tree's "VCP will use secret to get credentials"), CPI's secrets-directory, or inline.
func vsphereConfig(src Source, format string, g vsGlobal, vcs []vc) *Config {
	cfg := &Config{Provider: VSphere, Format: format, Source: src}
	if len(vcs) == 0 {
		cfg.Notes = append(cfg.Notes, "no vCenter named (a worker-node config only needs the VM UUID)")
	}
	refs := map[string]int{}
	for _, v := range vcs {
		switch {
		case v.secretName != "" && v.secretNamespace != "":
			key := v.secretNamespace + "/" + v.secretName
			if i, ok := refs[key]; ok {
				cfg.SecretRefs[i].Servers = append(cfg.SecretRefs[i].Servers, v.server)
			} else {
				refs[key] = len(cfg.SecretRefs)
				cfg.SecretRefs = append(cfg.SecretRefs, SecretRef{Provider: VSphere, Namespace: v.secretNamespace,
					Name: v.secretName, Servers: []string{v.server}, Insecure: v.insecure, Port: v.port, CAFile: v.caFile})
			}
			if v.user != "" {
				cfg.Notes = append(cfg.Notes, fmt.Sprintf("vCenter %s: user %q in %s is ignored, Secret %s is used", v.server, v.user, v.section, key))
			}
		case v.user != "" || v.password != "":
			s := src
			s.Section = v.section
			c := Credential{Provider: VSphere, Server: v.server, Port: v.port, Username: v.user, Insecure: v.insecure,
				CAFile: v.caFile, Source: s}.WithPassword(v.password)
			cfg.Credentials = append(cfg.Credentials, c)
		case g.secretsDirectory != "" || format == "yaml":
			dir := g.secretsDirectory
			if dir == "" {
				dir = DefaultSecretsDirectory
			}
			cfg.SecretsDirectory = dir
			cfg.Credentials = append(cfg.Credentials, Credential{Provider: VSphere, Server: v.server, Port: v.port,
				Insecure: v.insecure, CAFile: v.caFile, Config: &src,
				Source: Source{Kind: SourceSecretsDirectory, Path: filepath.Join(dir, v.server+".{username,password}")}})
		default:
			cfg.Notes = append(cfg.Notes, fmt.Sprintf("vCenter %s in %s: no user, password or Secret", v.server, v.section))
		}
	}
	return cfg
}

// VSphereFromSecret reads the credentials in a vSphere credentials Secret: keys
// "<server>.username"/"<server>.password", or "server_<id>"/"username_<id>"/"password_<id>".
// src names the Secret; ref (may be nil) is the config that pointed here.
func VSphereFromSecret(data map[string][]byte, src Source, ref *SecretRef, cfgSrc *Source) ([]Credential, []string) {
	type up struct{ user, pass string }
	byServer := map[string]*up{}
	get := func(s string) *up {
		if byServer[s] == nil {
			byServer[s] = &up{}
		}
		return byServer[s]
	}
	for k, v := range data {
		val := strings.TrimSpace(string(v))
		switch {
		case strings.HasSuffix(k, ".username"):
			get(strings.TrimSuffix(k, ".username")).user = val
		case strings.HasSuffix(k, ".password"):
			get(strings.TrimSuffix(k, ".password")).pass = val
		case strings.HasPrefix(k, "server_"):
			id := strings.TrimPrefix(k, "server_")
			u := get(val)
			u.user = strings.TrimSpace(string(data["username_"+id]))
			u.pass = strings.TrimSpace(string(data["password_"+id]))
		}
	}
	var notes []string
	servers := make([]string, 0, len(byServer))
	for s := range byServer {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	var out []Credential
	for _, s := range servers {
		u := byServer[s]
		c := Credential{Provider: VSphere, Server: s, Username: u.user, Source: src, Config: cfgSrc}
		if ref != nil {
			c.Port, c.Insecure, c.CAFile = ref.Port, ref.Insecure, ref.CAFile
		}
		if u.user == "" || u.pass == "" {
			notes = append(notes, fmt.Sprintf("%s: server %s has no username or no password", src, s))
		}
		out = append(out, c.WithPassword(u.pass))
	}
	if ref != nil {
		for _, want := range ref.Servers {
			if byServer[want] == nil {
				notes = append(notes, fmt.Sprintf("%s: no keys %s.username/%s.password for vCenter %s", src, want, want, want))
			}
		}
	}
	return out, notes
}

// ReadSecretsDirectory fills the credentials of a secrets-directory from local files, when the
// directory is readable here (credwatch runs on the node). Missing files leave PasswordSet false.
func ReadSecretsDirectory(c Credential, dir string) Credential {
	user, err1 := limits.ReadFile(filepath.Join(dir, c.Server+".username"), limits.File)
	pass, err2 := limits.ReadFile(filepath.Join(dir, c.Server+".password"), limits.File)
	if err1 != nil || err2 != nil {
		return c
	}
	c.Username = strings.TrimSpace(string(user))
	if fi, err := os.Stat(filepath.Join(dir, c.Server+".password")); err == nil {
		t := fi.ModTime()
		c.Source.Changed = &t
	}
	return c.WithPassword(strings.TrimSpace(string(pass)))
}
