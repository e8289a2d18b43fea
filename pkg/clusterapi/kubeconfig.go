// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package clusterapi

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// SecretData is a Secret's data as the API server stores it: data's values decoded, with
// stringData's merged over them (the API server merges stringData into data on write, and a
// key in both takes stringData's value). A value of data that is not base64 is an error naming
// the key, never the value.
func SecretData(sec *unstructured.Unstructured) (map[string][]byte, error) {
	out := map[string][]byte{}
	data, _, _ := unstructured.NestedMap(sec.Object, "data")
	for k, v := range data {
		s, _ := v.(string)
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("data.%s is not base64", k)
		}
		out[k] = b
	}
	str, _, _ := unstructured.NestedMap(sec.Object, "stringData")
	for k, v := range str {
		s, _ := v.(string)
		out[k] = []byte(s)
	}
	return out, nil
}

// SafeREST is the client configuration of a kubeconfig that credwatch did not get from the
// user (a <cluster>-kubeconfig Secret, written by whoever can write Secrets on the management
// cluster). Such a kubeconfig is data, never instructions: only its current context's inline
// data is used (server, CA data, TLS server name, token, basic-auth, client certificate and key
// data, impersonation). Everything that would make credwatch run a command, read a local file
// or go through another host is refused, each with one error naming what and the field:
// exec and auth-provider plugins, tokenFile, the certificate-authority, client-certificate and
// client-key file paths, proxy-url, and a server that is not https:// (its token would cross
// in clear text). what names the source ("Secret NS/NAME data.value") in errors.
func SafeREST(kc []byte, what string) (*rest.Config, error) {
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		// The parser's error may quote the document, which carries keys and tokens.
		return nil, fmt.Errorf("%s is not a usable kubeconfig", what)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if cfg.CurrentContext == "" || !ok {
		return nil, fmt.Errorf("%s: no current-context, or it names no context", what)
	}
	cl, ok := cfg.Clusters[ctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("%s: context %q names no cluster", what, ctx.Cluster)
	}
	user, ok := cfg.AuthInfos[ctx.AuthInfo]
	if !ok {
		user = clientcmdapi.NewAuthInfo()
	}
	if bad := refused(cl, user); len(bad) > 0 {
		return nil, fmt.Errorf("%s: refused %s: a kubeconfig read from a cluster may hold only inline data (credwatch runs no command, reads no file and uses no proxy it names)",
			what, strings.Join(bad, ", "))
	}
	u, err := url.Parse(cl.Server)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%s: cluster %q: server is not an https:// URL", what, ctx.Cluster)
	}
	return &rest.Config{
		Host: cl.Server,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure: cl.InsecureSkipTLSVerify, ServerName: cl.TLSServerName, CAData: cl.CertificateAuthorityData,
			CertData: user.ClientCertificateData, KeyData: user.ClientKeyData,
		},
		BearerToken: user.Token, Username: user.Username, Password: user.Password,
		Impersonate: rest.ImpersonationConfig{UserName: user.Impersonate, UID: user.ImpersonateUID,
			Groups: user.ImpersonateGroups, Extra: user.ImpersonateUserExtra},
		DisableCompression: cl.DisableCompression,
	}, nil
}

// refused lists the fields of the current cluster and user that are not inline data.
func refused(cl *clientcmdapi.Cluster, user *clientcmdapi.AuthInfo) []string {
	var bad []string
	for field, set := range map[string]bool{
		"users[].user.exec":                        user.Exec != nil,
		"users[].user.auth-provider":               user.AuthProvider != nil,
		"users[].user.tokenFile":                   user.TokenFile != "",
		"users[].user.client-certificate":          user.ClientCertificate != "",
		"users[].user.client-key":                  user.ClientKey != "",
		"clusters[].cluster.certificate-authority": cl.CertificateAuthority != "",
		"clusters[].cluster.proxy-url":             cl.ProxyURL != "",
	} {
		if set {
			bad = append(bad, field)
		}
	}
	sort.Strings(bad)
	return bad
}
