// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"fmt"
)

// openStackFromINI handles cloud.conf [Global] of in-tree OpenStack (≤1.25), OCCM and
// cinder-csi, with the keys their gcfg structs define (OCCM reads tenant-id, not project-id).
func openStackFromINI(c *iniConfig, lines []iniLine, src Source) *Config {
	cfg := &Config{Provider: OpenStack, Format: "ini", Source: src}
	hasGlobal := false
	for _, l := range lines {
		hasGlobal = hasGlobal || l.section == "global"
	}
	if !hasGlobal {
		cfg.Notes = append(cfg.Notes, "no [Global] section: no credentials here")
		return cfg
	}
	g := c.Global
	if g.UseClouds {
		cfg.CloudsFile = g.CloudsFile
		if cfg.CloudsFile == "" {
			cfg.CloudsFile = "clouds.yaml (OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack, /etc/openstack)"
		}
		cfg.Cloud = g.Cloud
		cfg.Notes = append(cfg.Notes, fmt.Sprintf("use-clouds: credentials also from %s cloud %q; [Global] values win", cfg.CloudsFile, cfg.Cloud))
	}
	if g.SecretName != "" && g.SecretNamespace != "" {
		cfg.SecretRefs = append(cfg.SecretRefs, SecretRef{Provider: OpenStack, Namespace: g.SecretNamespace, Name: g.SecretName})
	}
	cr := Credential{
		Provider:          OpenStack,
		Server:            g.AuthURL,
		Username:          g.Username,
		UserID:            g.UserID,
		ProjectID:         g.TenantID,
		ProjectName:       g.TenantName,
		UserDomainID:      or(g.UserDomainID, g.DomainID),
		UserDomainName:    or(g.UserDomainName, g.DomainName),
		ProjectDomainID:   or(g.TenantDomainID, g.DomainID),
		ProjectDomainName: or(g.TenantDomainName, g.DomainName),
		AppCredentialID:   g.ApplicationCredentialID,
		AppCredentialName: g.ApplicationCredentialName,
		Region:            g.Region,
		CAFile:            g.CAFile,
		Insecure:          truthy(g.TLSInsecure),
	}
	cr.Source = src
	cr.Source.Section = "[Global]"
	secret := g.Password
	if cr.AppCredentialID != "" || cr.AppCredentialName != "" {
		secret = g.ApplicationCredentialSecret
	}
	cr = cr.WithPassword(secret)
	switch {
	case cr.Username != "" || cr.UserID != "" || cr.AppCredentialID != "" || cr.AppCredentialName != "":
		if cr.Server == "" {
			cfg.Notes = append(cfg.Notes, "[Global] has credentials but no auth-url")
		}
		cfg.Credentials = append(cfg.Credentials, cr)
	case len(cfg.SecretRefs) == 0 && cfg.CloudsFile == "":
		cfg.Notes = append(cfg.Notes, "[Global] names no user, application credential or Secret")
	}
	return cfg
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// parseCloudsYAML handles OpenStack's clouds.yaml: one credential per cloud.
func parseCloudsYAML(data []byte, src Source) (*Config, error) {
	var y cloudsYAML
	if err := decodeYAML(data, &y, src, "clouds.yaml"); err != nil {
		return nil, err
	}
	cfg := &Config{Provider: OpenStack, Format: "clouds.yaml", Source: src}
	names := sortedKeys(y.Clouds)
	for _, n := range names {
		e := y.Clouds[n]
		if e == nil {
			e = &cloudYAML{}
		}
		a := e.Auth
		s := src
		s.Section = "clouds." + n
		c := Credential{
			Provider:          OpenStack,
			Server:            a.AuthURL,
			Username:          a.Username,
			UserID:            a.UserID,
			ProjectName:       a.ProjectName,
			ProjectID:         a.ProjectID,
			UserDomainName:    or(a.UserDomainName, a.DomainName),
			UserDomainID:      or(a.UserDomainID, a.DomainID),
			ProjectDomainName: or(a.ProjectDomainName, a.DomainName),
			ProjectDomainID:   or(a.ProjectDomainID, a.DomainID),
			AppCredentialID:   a.ApplicationCredentialID,
			AppCredentialName: a.ApplicationCredentialName,
			Region:            e.RegionName,
			CAFile:            e.CACert,
			Insecure:          e.Verify != nil && !*e.Verify,
			Source:            s,
		}
		secret := a.Password
		if c.AppCredentialID != "" || c.AppCredentialName != "" {
			secret = a.ApplicationCredentialSecret
		}
		cfg.Credentials = append(cfg.Credentials, c.WithPassword(secret))
	}
	if len(names) == 0 {
		cfg.Notes = append(cfg.Notes, "clouds.yaml names no cloud")
	}
	return cfg, nil
}

// SelectCloud keeps only the credentials of cloud name (clouds.yaml), when name is set.
func (c *Config) SelectCloud(name string) {
	if name == "" || c.Format != "clouds.yaml" {
		return
	}
	kept := c.Credentials[:0]
	for _, cr := range c.Credentials {
		if cr.Source.Section == "clouds."+name {
			kept = append(kept, cr)
		}
	}
	c.Credentials = kept
}
