// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package apiserver is what the lab knows of kube-apiserver: the flags of a stacked member
// (its own etcd, the lab CA, its service-account keys and issuers) and its health endpoints.
package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Config is one member's flags.
type Config struct {
	IP   string // advertise and bind address
	Port int
	// EtcdURL is the member's etcd (stacked, as kubeadm's --etcd-servers=https://127.0.0.1:2379).
	EtcdURL string
	// ClientCAFile, CertFile and KeyFile: the CA clients' certificates chain to, and the serving
	// pair; CertDir is where the apiserver may write what it generates.
	ClientCAFile, CertFile, KeyFile, CertDir string
	SAKeyFile                                string // --service-account-signing-key-file
	SAPubFile                                string // --service-account-key-file
	// SigningEndpoint is an external signer's socket (--service-account-signing-endpoint); when
	// set, SAKeyFile and SAPubFile are left out: kube-apiserver refuses either flag beside it
	// ("can't set `--service-account-signing-key-file` and/or `--service-account-key-file` with
	// `--service-account-signing-endpoint` (They are mutually exclusive)", k8s.io/kubernetes
	// pkg/controlplane/apiserver/options/validation.go at v1.36.3, line 100).
	SigningEndpoint string
	Issuers         []string // the first signs, every one is accepted
	Audiences       []string // --api-audiences; empty: the first issuer
	ServiceCIDR     string
	// AuthenticationConfigFile is an AuthenticationConfiguration (--authentication-config; see
	// authn.go), empty: none.
	AuthenticationConfigFile string
	// AuditPolicyFile and AuditLogPath turn on the member's audit log (JSON lines, one file, no
	// rotation); empty: none.
	AuditPolicyFile, AuditLogPath string
}

// Args are the member's flags, in a stable order.
func (c Config) Args() []string {
	args := []string{
		"--advertise-address=" + c.IP,
		"--bind-address=" + c.IP,
		"--secure-port=" + strconv.Itoa(c.Port),
		"--etcd-servers=" + c.EtcdURL,
		"--client-ca-file=" + c.ClientCAFile,
		"--tls-cert-file=" + c.CertFile,
		"--tls-private-key-file=" + c.KeyFile,
		"--cert-dir=" + c.CertDir,
	}
	if c.SigningEndpoint != "" {
		args = append(args, "--service-account-signing-endpoint="+c.SigningEndpoint)
	} else {
		args = append(args, "--service-account-signing-key-file="+c.SAKeyFile, "--service-account-key-file="+c.SAPubFile)
	}
	args = append(args,
		"--authorization-mode=Node,RBAC",
		"--service-cluster-ip-range="+c.ServiceCIDR,
		"--profiling=false",
	)
	for _, iss := range c.Issuers {
		args = append(args, "--service-account-issuer="+iss)
	}
	if len(c.Audiences) > 0 {
		args = append(args, "--api-audiences="+strings.Join(c.Audiences, ","))
	}
	if c.AuthenticationConfigFile != "" {
		args = append(args, "--authentication-config="+c.AuthenticationConfigFile)
	}
	if c.AuditPolicyFile != "" && c.AuditLogPath != "" {
		args = append(args, "--audit-policy-file="+c.AuditPolicyFile, "--audit-log-path="+c.AuditLogPath, "--audit-log-format=json", "--audit-log-maxbackup=0")
	}
	return args
}

// Readyz is nil when base/readyz answers 200.
func Readyz(ctx context.Context, c *http.Client, base string) error {
	return Get200(ctx, c, base+"/readyz")
}

// Get200 is nil when url answers 200 (a component's /healthz or /readyz).
func Get200(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", req.URL.Path, resp.StatusCode)
	}
	return nil
}
