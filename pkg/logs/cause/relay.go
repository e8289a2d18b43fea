// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cause

import "strings"

// relayMarker is the start of the API server's aggregate authentication error as TokenReview
// consumers relay it inside their own messages (Vault's "lookup failed: [...]", istiod's "the
// service account authentication returns an error: [...]", Dapr's "invalid token: [...]") and
// as people paste it without the line around it.
const relayMarker = "[" + loopbackText

// fragmentMarker starts the aggregate's text without its brackets, as people quote it in reports
// and as some consumers print it: "invalid bearer token, service account token has been
// invalidated".
const fragmentMarker = loopbackText + ", "

// relayedError finds a relayed aggregate error in text: from relayMarker to its closing bracket,
// or to the end of a cut line (cut is then true). The aggregate's fragment without brackets
// (fragmentMarker to the end of the text) and a text that is only the loopback part are read as
// the aggregate they were cut from.
func relayedError(text string) (agg string, cut, ok bool) {
	i := strings.Index(text, relayMarker)
	if i < 0 {
		if j := strings.Index(text, fragmentMarker); j >= 0 {
			return "[" + strings.TrimSpace(text[j:]) + "]", false, true
		}
		if strings.TrimSpace(text) == loopbackText {
			return loopbackText, false, true
		}
		return "", false, false
	}
	depth := 0
	for j := i; j < len(text); j++ {
		switch text[j] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return text[i : j+1], false, true
			}
		}
	}
	return text[i:], true, true
}

// consumer is a component recognised by what its lines say.
type consumer struct {
	name    string
	markers []string // any of them names the component
}

// consumers are checked in order: a relaying component before the one whose message it relays
// (external-secrets relays Vault's error, istio-csr istiod's message).
var consumers = []consumer{
	{"istiod", []string{"KubeJWTAuthenticator", "failed to validate the JWT from cluster", "Failed to fetch jwt public key from",
		"Failed to fetch public key from", "Failed to fetch jwks_uri from", "Failed to refresh JWT public key from",
		"Failed to resolve Jwks from issuer"}},
	{"istio-proxy", []string{"\tcitadelclient\t", "\txdsproxy\t"}},
	{"envoy", []string{"jwt_authn_access_denied{", "Jwt authentication completed with: "}},
	{"linkerd-proxy", []string{"linkerd2_proxy::", "linkerd_proxy_identity_client::"}},
	{"linkerd-identity", []string{"Unable to create kubernetes token reviews"}},
	{"vault", []string{"auth.kubernetes.auth_kubernetes", "login unauthorized due to: ", `claim "iss" is invalid`, `claim \"iss\" is invalid`,
		`claim "aud" is invalid`, `claim \"aud\" is invalid`}},
	{"dapr-sentry", []string{"scope=dapr.sentry"}},
	{"daprd", []string{"scope=dapr.runtime"}},
	{"aws-iam-authenticator", []string{`expected \"k8s-aws-v1.\" prefix`}},
	{"kubelet", []string{"MountVolume.SetUp failed", "currently active client certificate has expired",
		"existing bootstrap client certificate"}},
	{"apiserver", []string{"Failed to make webhook authenticator request"}},
	{"kubeadm", []string{"[discovery] ", "cluster-info ConfigMap", "cluster info object", `"kubeadm token create"`}},
}

// loggers maps structured logger names to the components that use them.
var loggers = map[string]string{
	"controllers.ExternalSecret": "external-secrets",
	"grpc-server":                "istio-csr",
}

// componentOf names the component a line's logger or text identifies, or "".
func componentOf(logger, text string) string {
	if c := loggers[logger]; c != "" {
		return c
	}
	if c := componentField(text); c != "" {
		return c
	}
	for _, c := range consumers {
		for _, m := range c.markers {
			if strings.Contains(text, m) {
				return c.name
			}
		}
	}
	return ""
}

// componentField reads a structured `"component": "name"` field (zap console and JSON loggers of
// embedded API servers such as vcluster).
func componentField(text string) string {
	for _, key := range []string{`"component": "`, `"component":"`} {
		if i := strings.Index(text, key); i >= 0 {
			v := text[i+len(key):]
			if j := strings.IndexByte(v, '"'); j > 0 {
				return v[:j]
			}
		}
	}
	return ""
}

// clouds are the providers whose SDK errors the catalogue spells under keys prefixed with their
// name ("aws-…", "azure-…"); a line with no other sign of its writer is reported as that SDK's.
var clouds = []string{"aws", "azure", "gcp", "hetzner", "digitalocean", "openstack"}

// cloudOf names the cloud of a message key, or "".
func cloudOf(key string) string {
	for _, c := range clouds {
		if key == c || strings.HasPrefix(key, c+"-") {
			return c
		}
	}
	return ""
}
