// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/credwatch/credwatch/pkg/kubever"
	"sigs.k8s.io/yaml"
)

// CredentialProviderBinary is the lab's kubelet image credential provider program
// (hack/labbin/credprovider), built with DefaultVersion's binaries. It logs, per request, the
// image and the claims of the token the kubelet handed it (never the token), and answers
// registry credentials that are not the token.
const CredentialProviderBinary = "lab-credential-provider"

// credentialProviderSince is the first line whose kubelet hands credential providers
// service-account tokens by default (KubeletServiceAccountTokenForCredentialProviders, beta and on
// from v1.34).
var credentialProviderSince = kubever.MustParse("v1.34.0")

// Defaults of CredentialProviderOptions.
const (
	DefaultCredentialProviderAudience = "registry.credwatch.lab"
	// DefaultCredentialProviderImages is the registry the provider matches: a port on the node's
	// own loopback where nothing listens, so a pull never leaves the node.
	DefaultCredentialProviderImages = "127.0.0.1:5999"
)

// CredentialProviderOptions configure the nodes' image credential provider.
type CredentialProviderOptions struct {
	// Audience is tokenAttributes.serviceAccountTokenAudience: the audience of the token the
	// kubelet requests for the pod (default DefaultCredentialProviderAudience).
	Audience string `json:"audience,omitempty"`
	// MatchImages are the provider's matchImages (default DefaultCredentialProviderImages).
	MatchImages []string `json:"matchImages,omitempty"`
}

func (o *CredentialProviderOptions) complete(version string) error {
	if o == nil {
		return nil
	}
	if o.Audience == "" {
		o.Audience = DefaultCredentialProviderAudience
	}
	if len(o.MatchImages) == 0 {
		o.MatchImages = []string{DefaultCredentialProviderImages}
	}
	if strings.ContainsAny(o.Audience, " \t\n") {
		return fmt.Errorf("credential provider audience %q: want no spaces", o.Audience)
	}
	return lineSince("image credential provider tokens", version, credentialProviderSince, "hands credential providers no service-account token by default (from %s)")
}

// CredentialProviderLog is the file the provider of node writes its requests to.
func (l *Lab) CredentialProviderLog(node string) string {
	return l.path("credential-provider", node+".log")
}

// credentialProviderArgs writes node's CredentialProviderConfig (kubelet.config.k8s.io/v1) and
// returns the kubelet flags that name it and the directory of the provider's binary; none
// without Options.CredentialProvider.
func (l *Lab) credentialProviderArgs(node string) ([]string, error) {
	o := l.o.CredentialProvider
	if o == nil {
		return nil, nil
	}
	bin, err := Binary(l.o.BinDir, DefaultVersion, CredentialProviderBinary)
	if err != nil {
		return nil, err
	}
	cfg := map[string]any{
		"apiVersion": "kubelet.config.k8s.io/v1",
		"kind":       "CredentialProviderConfig",
		"providers": []map[string]any{{
			"name":                 CredentialProviderBinary,
			"matchImages":          o.MatchImages,
			"defaultCacheDuration": "1s",
			"apiVersion":           "credentialprovider.kubelet.k8s.io/v1",
			"args":                 []string{"--log=" + l.CredentialProviderLog(node)},
			"tokenAttributes": map[string]any{
				"serviceAccountTokenAudience": o.Audience,
				"cacheType":                   "ServiceAccount",
				"requireServiceAccount":       true,
			},
		}},
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("credential provider config: %w", err)
	}
	file := l.path("credential-provider", node+".yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return nil, fmt.Errorf("credential provider config: %w", err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return nil, fmt.Errorf("credential provider config: %w", err)
	}
	return []string{"--image-credential-provider-config=" + file, "--image-credential-provider-bin-dir=" + filepath.Dir(bin)}, nil
}
