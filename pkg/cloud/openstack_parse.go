package cloud

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// openStackFromINI handles cloud.conf [Global] of in-tree OpenStack (≤1.25), OCCM and cinder-csi.
func openStackFromINI(secs []section, src Source) (*Config, error) {
	cfg := &Config{Provider: OpenStack, Format: "ini", Source: src}
	var g *section
	for i := range secs {
		if strings.EqualFold(secs[i].name, "global") && secs[i].sub == "" {
			g = &secs[i]
		}
	}
	if g == nil {
		cfg.Notes = append(cfg.Notes, "no [Global] section: no credentials here")
		return cfg, nil
	}
	if truthy(g.get("use-clouds")) {
		cfg.CloudsFile = g.get("clouds-file")
		if cfg.CloudsFile == "" {
			cfg.CloudsFile = "clouds.yaml (OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack, /etc/openstack)"
		}
		cfg.Cloud = g.get("cloud")
		cfg.Notes = append(cfg.Notes, fmt.Sprintf("use-clouds: credentials also from %s cloud %q; [Global] values win", cfg.CloudsFile, cfg.Cloud))
	}
	if name, ns := g.get("secret-name"), g.get("secret-namespace"); name != "" && ns != "" {
		cfg.SecretRefs = append(cfg.SecretRefs, SecretRef{Provider: OpenStack, Namespace: ns, Name: name})
	}
	domID, domName := g.get("domain-id"), g.get("domain-name")
	c := Credential{
		Provider:          OpenStack,
		Server:            g.get("auth-url"),
		Username:          g.get("username", "user-name"),
		UserID:            g.get("user-id"),
		ProjectID:         g.get("tenant-id", "project-id"),
		ProjectName:       g.get("tenant-name", "project-name"),
		UserDomainID:      or(g.get("user-domain-id"), domID),
		UserDomainName:    or(g.get("user-domain-name"), domName),
		ProjectDomainID:   or(g.get("tenant-domain-id", "project-domain-id"), domID),
		ProjectDomainName: or(g.get("tenant-domain-name", "project-domain-name"), domName),
		AppCredentialID:   g.get("application-credential-id"),
		AppCredentialName: g.get("application-credential-name"),
		Region:            g.get("region"),
		CAFile:            g.get("ca-file"),
		Insecure:          truthy(g.get("tls-insecure")),
	}
	c.Source = src
	c.Source.Section = "[Global]"
	secret := g.get("password")
	if c.AppCredentialID != "" || c.AppCredentialName != "" {
		secret = g.get("application-credential-secret")
	}
	c = c.WithPassword(secret)
	switch {
	case c.Username != "" || c.UserID != "" || c.AppCredentialID != "" || c.AppCredentialName != "":
		if c.Server == "" {
			cfg.Notes = append(cfg.Notes, "[Global] has credentials but no auth-url")
		}
		cfg.Credentials = append(cfg.Credentials, c)
	case len(cfg.SecretRefs) == 0 && cfg.CloudsFile == "":
		cfg.Notes = append(cfg.Notes, "[Global] names no user, application credential or Secret")
	}
	return cfg, nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

type cloudsYAML struct {
	Clouds map[string]struct {
		Auth struct {
			AuthURL                     flex `json:"auth_url"`
			Username                    flex `json:"username"`
			UserID                      flex `json:"user_id"`
			Password                    flex `json:"password"`
			ProjectName                 flex `json:"project_name"`
			ProjectID                   flex `json:"project_id"`
			TenantName                  flex `json:"tenant_name"`
			TenantID                    flex `json:"tenant_id"`
			UserDomainName              flex `json:"user_domain_name"`
			UserDomainID                flex `json:"user_domain_id"`
			ProjectDomainName           flex `json:"project_domain_name"`
			ProjectDomainID             flex `json:"project_domain_id"`
			DomainName                  flex `json:"domain_name"`
			DomainID                    flex `json:"domain_id"`
			ApplicationCredentialID     flex `json:"application_credential_id"`
			ApplicationCredentialName   flex `json:"application_credential_name"`
			ApplicationCredentialSecret flex `json:"application_credential_secret"`
		} `json:"auth"`
		RegionName flex `json:"region_name"`
		CACert     flex `json:"cacert"`
		Verify     flex `json:"verify"`
	} `json:"clouds"`
}

// parseCloudsYAML handles OpenStack's clouds.yaml: one credential per cloud.
func parseCloudsYAML(data []byte, src Source) (*Config, error) {
	var y cloudsYAML
	if err := yaml.Unmarshal(data, &y); err != nil {
		return nil, fmt.Errorf("parse %s as clouds.yaml: %w", src, err)
	}
	cfg := &Config{Provider: OpenStack, Format: "clouds.yaml", Source: src}
	names := make([]string, 0, len(y.Clouds))
	for n := range y.Clouds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := y.Clouds[n]
		a := e.Auth
		s := src
		s.Section = "clouds." + n
		c := Credential{
			Provider:          OpenStack,
			Server:            string(a.AuthURL),
			Username:          string(a.Username),
			UserID:            string(a.UserID),
			ProjectName:       string(or(string(a.ProjectName), string(a.TenantName))),
			ProjectID:         string(or(string(a.ProjectID), string(a.TenantID))),
			UserDomainName:    or(string(a.UserDomainName), string(a.DomainName)),
			UserDomainID:      or(string(a.UserDomainID), string(a.DomainID)),
			ProjectDomainName: or(string(a.ProjectDomainName), string(a.DomainName)),
			ProjectDomainID:   or(string(a.ProjectDomainID), string(a.DomainID)),
			AppCredentialID:   string(a.ApplicationCredentialID),
			AppCredentialName: string(a.ApplicationCredentialName),
			Region:            string(e.RegionName),
			CAFile:            string(e.CACert),
			Insecure:          e.Verify != "" && !truthy(string(e.Verify)),
			Source:            s,
		}
		secret := string(a.Password)
		if c.AppCredentialID != "" || c.AppCredentialName != "" {
			secret = string(a.ApplicationCredentialSecret)
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
