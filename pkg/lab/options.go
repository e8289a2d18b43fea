// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/kubever"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	"github.com/credwatch/credwatch/pkg/lab/signer"
)

// LBMode selects which members the load balancer sends connections to.
type LBMode = lb.Mode

const (
	// LBReady skips members whose /readyz fails (checked every second).
	LBReady = lb.Ready
	// LBAll keeps sending to members that are not ready, like the ELB in the seed incident.
	LBAll = lb.All
)

// Version lines the lab knows how to run.
const (
	DefaultVersion = "v1.36.3"
	OldVersion     = "v1.30.14"
	// InTreeCloudVersion is the last line that compiles the in-tree vSphere cloud provider
	// (k8s.io/legacy-cloud-providers v0.29 has vsphere, v0.30 does not): the lab builds its
	// kube-controller-manager and kubelet for CloudOptions.Version, and the rest of the line
	// (apiserver, scheduler, kube-proxy) for a lab whose Version it is.
	InTreeCloudVersion = "v1.29.15"
	// CloudControllerManager is the lab's cloud controller manager binary (of DefaultVersion,
	// hack/labbin/ccm): k8s.io/cloud-provider with a govmomi-backed vSphere provider.
	CloudControllerManager = "vsphere-cloud-controller-manager"
	EtcdVersion            = "v3.6.16"
	// DefaultIssuer is the lab's service-account issuer unless Options.Issuers says otherwise.
	DefaultIssuer = "https://kubernetes.default.svc.cluster.local"
	// ServiceCIDR is every member's --service-cluster-ip-range.
	ServiceCIDR = "10.96.0.0/16"
	// ExternalSigner is the members' external JWT signer program (Options.ExternalSigner), built
	// with DefaultVersion's binaries.
	ExternalSigner = signer.Binary
)

// externalSignerSince is the first line whose kube-apiserver has the ExternalServiceAccountTokenSigner
// gate on by default (beta in 1.34, GA and locked on in 1.36: k8s.io/kubernetes
// pkg/features/kube_features.go at v1.36.3, lines 1468-1472).
var externalSignerSince = kubever.MustParse("v1.34.0")

// SA key choices for MemberOptions.SAKey (anything else is a path to a PEM private key).
const (
	SAKeyShared = "shared"
	SAKeyNew    = "new"
)

// MemberOptions configures one new kube-apiserver member.
type MemberOptions struct {
	Version      string   `json:"version,omitempty"`      // default: Options.Version
	SAKey        string   `json:"saKey,omitempty"`        // "shared" (default) | "new" | path to a PEM private key
	Issuers      []string `json:"issuers,omitempty"`      // default: the lab's issuers
	APIAudiences []string `json:"apiAudiences,omitempty"` // default: unset (the apiserver then uses the issuers)
	ExtraArgs    []string `json:"extraArgs,omitempty"`    // appended kube-apiserver flags
	// AuthenticationConfig starts the member with --authentication-config naming a file holding
	// it; default: the lab's (Options.OIDC), else none.
	AuthenticationConfig *apiserver.AuthenticationConfiguration `json:"authenticationConfig,omitempty"`
}

// Options configures a lab.
type Options struct {
	Dir                   string      `json:"dir"`
	BinDir                string      `json:"binDir,omitempty"`
	Members               int         `json:"members,omitempty"`
	EtcdMembers           int         `json:"etcdMembers,omitempty"`
	Version               string      `json:"version,omitempty"`
	Issuers               []string    `json:"issuers,omitempty"`
	WithControllerManager bool        `json:"withControllerManager,omitempty"`
	LBMode                LBMode      `json:"lbMode,omitempty"`
	Network               NetworkMode `json:"network,omitempty"` // default NetworkHosts
	// Nodes is how many worker nodes (kubelet, containerd, kube-proxy) to start; they need the
	// hosts network and bring a kube-scheduler and the controller manager with them.
	Nodes int `json:"nodes,omitempty"`
	// KubeletRestart, when set, runs every node's kubelet as systemd runs kubelet.service
	// (Restart=always, RestartSec=KubeletRestart; kubeadm's and kubespray's units: 10 s): a
	// kubelet that exits is started again. Without it, it stays down.
	KubeletRestart time.Duration `json:"kubeletRestart,omitempty"`
	// Images is the lab images tarball imported into every node (default: built from this
	// source tree into <BinDir>/../images).
	Images string `json:"images,omitempty"`
	// Cloud runs the controller manager and the kubelets with a cloud provider (nil: none).
	Cloud *CloudOptions `json:"cloud,omitempty"`
	// Registries are plain-http image registries on this machine's loopback (host:port, e.g. a
	// test's registry on 127.0.0.1:5000) that the nodes pull from under the same name: the lab
	// forwards a port of its network's gateway to each and writes a containerd hosts.toml per
	// registry in every node, so a pod's `image: 127.0.0.1:5000/credwatch:0.1.0` is what was
	// pushed there. Both go with the lab.
	Registries []string `json:"registries,omitempty"`
	// ExtraImages are more image tarballs imported into every node (e.g. a cloud controller
	// manager's).
	ExtraImages []string `json:"extraImages,omitempty"`
	// ExternalSigner runs an external JWT signer (KEP-740, the lab program external-jwt-signer)
	// beside every member, on its host, and starts the member with
	// --service-account-signing-endpoint and without key files; the signer serves and signs with
	// the member's key (MemberOptions.SAKey). The controller manager then runs without
	// --service-account-private-key-file: its legacy token controller is off, as it must be when no
	// member verifies with a key file. Needs a line from v1.34 (the gate on by default).
	ExternalSigner bool `json:"externalSigner,omitempty"`
	// SignerRefreshHint is the refresh hint the signers start with (default
	// signer.DefaultRefreshHint, 60 s): how often each member fetches its signer's keys.
	SignerRefreshHint time.Duration `json:"signerRefreshHint,omitempty"`
	// OIDC runs the lab's OIDC issuer (discovery and JWKS over HTTPS on the load balancer's
	// address) and starts every member with an AuthenticationConfiguration whose JWT
	// authenticator trusts it (KEP-3331; from v1.34). nil: neither.
	OIDC *OIDCOptions `json:"oidc,omitempty"`
	// Audit gives every member an audit log at Metadata level (<dir>/logs/<member>-audit.log,
	// Lab.AuditLog): which member minted a token (the TokenRequest's
	// authentication.kubernetes.io/issued-credential-id annotation) and which used it
	// (user.extra authentication.kubernetes.io/credential-id).
	Audit bool `json:"audit,omitempty"`
	// CredentialProvider configures every node's kubelet with the lab's image credential provider
	// (KEP-4412, the lab program lab-credential-provider): for the images it matches, the kubelet
	// requests a service-account token for the pod with the provider's audience (NodeRestriction
	// decides whether it may) and hands it to the program. nil: none.
	CredentialProvider *CredentialProviderOptions `json:"credentialProvider,omitempty"`
	Wait               time.Duration              `json:"wait,omitempty"`
	Log                io.Writer                  `json:"-"`
}

// RemoveOptions configures RemoveMember.
type RemoveOptions struct {
	// EtcdFirst removes the member's etcd member (and stops that etcd) before anything else.
	EtcdFirst bool `json:"etcdFirst,omitempty"`
	// KeepAPIServer leaves the apiserver running and in the load balancer (the KCP scale-down window).
	KeepAPIServer bool `json:"keepAPIServer,omitempty"`
}

// Member describes one kube-apiserver of the lab.
type Member struct {
	Name         string   `json:"name"`
	Address      string   `json:"address"`
	URL          string   `json:"url"`
	Version      string   `json:"version"`
	Issuers      []string `json:"issuers"`
	APIAudiences []string `json:"apiAudiences,omitempty"`
	SAKeyFile    string   `json:"saKeyFile"`
	SAPubFiles   []string `json:"saPubFiles"`
	EtcdName     string   `json:"etcdName"`
	LogFile      string   `json:"logFile"`
	Args         []string `json:"args"`
	// SigningEndpoint is the socket of the member's external signer (Options.ExternalSigner),
	// whose log is SignerLogFile; SAKeyFile and SAPubFiles are then the key it started with.
	SigningEndpoint string `json:"signingEndpoint,omitempty"`
	SignerLogFile   string `json:"signerLogFile,omitempty"`
	// AuthenticationConfigFile is the member's --authentication-config (MemberOptions,
	// Options.OIDC); edit it with Lab.SetAuthenticationConfig.
	AuthenticationConfigFile string `json:"authenticationConfigFile,omitempty"`
}

// ValidateLBMode reports whether m is a known load-balancer mode.
func ValidateLBMode(m LBMode) error {
	switch m {
	case LBReady, LBAll:
		return nil
	}
	return fmt.Errorf("unknown load-balancer mode %q (want %q or %q)", m, LBReady, LBAll)
}

func (o *Options) complete() error {
	if o.Dir == "" {
		return fmt.Errorf("lab directory is not set")
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return fmt.Errorf("lab directory %q: %w", o.Dir, err)
	}
	o.Dir = abs
	if o.BinDir == "" {
		o.BinDir = DefaultBinDir()
	}
	if o.Members == 0 {
		o.Members = 3
	}
	if o.Members < 1 || o.Members > 50 {
		return fmt.Errorf("members %d: want 1..50", o.Members)
	}
	if o.EtcdMembers == 0 {
		o.EtcdMembers = o.Members
	}
	if o.EtcdMembers < 1 || o.EtcdMembers > 50 {
		return fmt.Errorf("etcd members %d: want 1..50", o.EtcdMembers)
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	if len(o.Issuers) == 0 {
		o.Issuers = []string{DefaultIssuer}
	}
	if o.LBMode == "" {
		o.LBMode = LBReady
	}
	if err := ValidateLBMode(o.LBMode); err != nil {
		return err
	}
	if o.Network == "" {
		o.Network = NetworkHosts
	}
	if err := ValidateNetworkMode(o.Network); err != nil {
		return err
	}
	if o.Nodes < 0 || o.Nodes > 20 {
		return fmt.Errorf("nodes %d: want 0..20", o.Nodes)
	}
	if o.Nodes > 0 {
		if o.Network != NetworkHosts {
			return fmt.Errorf("nodes need the hosts network (network %q)", o.Network)
		}
		o.WithControllerManager = true
	}
	if err := validateRegistries(o.Registries); err != nil {
		return err
	}
	if err := o.Cloud.validate(); err != nil {
		return err
	}
	if o.ExternalSigner {
		if err := externalSignerLine(o.Version); err != nil {
			return err
		}
	}
	if o.SignerRefreshHint != 0 && (o.SignerRefreshHint < time.Second || !o.ExternalSigner) {
		return fmt.Errorf("signer refresh hint %s: want at least 1s, with external signers", o.SignerRefreshHint)
	}
	if err := o.OIDC.complete(o.Version); err != nil {
		return err
	}
	if err := o.CredentialProvider.complete(o.Version); err != nil {
		return err
	}
	if o.CredentialProvider != nil && o.Nodes == 0 {
		return fmt.Errorf("an image credential provider is for nodes: start some")
	}
	if o.Wait <= 0 {
		o.Wait = 90 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// externalSignerLine is nil when version's kube-apiserver can use an external signer.
func externalSignerLine(version string) error {
	return lineSince("external signer", version, externalSignerSince, "has the ExternalServiceAccountTokenSigner gate off (on by default from %s)")
}

// lineSince is nil when version is since or later, else an error saying what the line lacks
// (lack has a %s for since).
func lineSince(what, version string, since kubever.Version, lack string) error {
	v, err := kubever.Parse(version)
	if err != nil {
		return fmt.Errorf("%s: version %q: %w", what, version, err)
	}
	if !v.AtLeast(since) {
		return fmt.Errorf("%s: kube-apiserver %s "+lack, what, version, since)
	}
	return nil
}

// DefaultBinDir is $CREDWATCH_LAB_BIN, else <module root>/.lab-cache/bin (found from the working
// directory upwards, then from the executable's directory upwards).
func DefaultBinDir() string {
	if d := os.Getenv("CREDWATCH_LAB_BIN"); d != "" {
		return d
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, s := range starts {
		for d := s; ; d = filepath.Dir(d) {
			if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
				strings.Contains(string(data), "module github.com/credwatch/credwatch\n") {
				return filepath.Join(d, ".lab-cache", "bin")
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return filepath.Join(".lab-cache", "bin")
}

// Binary returns the path of a lab binary ("kube-apiserver", "kube-controller-manager" of version,
// or "etcd"), or an error naming `make lab-binaries` when it is missing.
func Binary(binDir, version, name string) (string, error) {
	dir := version
	if name == "etcd" {
		dir = "etcd-" + EtcdVersion
	}
	p := filepath.Join(binDir, dir, name)
	st, err := os.Stat(p)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s %s not found at %s: run `make lab-binaries` (or set CREDWATCH_LAB_BIN)", name, dir, p)
	}
	return p, nil
}

// BinaryRef names one lab binary: Name of Version, or etcd (Version is then EtcdVersion's
// directory, "etcd-"+EtcdVersion).
type BinaryRef struct{ Version, Name string }

// Binaries is every binary `make lab-binaries` (hack/labbin/build.sh) builds.
func Binaries() []BinaryRef {
	return []BinaryRef{
		{"", "etcd"},
		{DefaultVersion, "kube-apiserver"},
		{OldVersion, "kube-apiserver"},
		{DefaultVersion, "kube-controller-manager"},
		{DefaultVersion, "kube-scheduler"},
		{DefaultVersion, "kubelet"},
		{DefaultVersion, "kube-proxy"},
		{InTreeCloudVersion, "kube-apiserver"},
		{InTreeCloudVersion, "kube-controller-manager"},
		{InTreeCloudVersion, "kube-scheduler"},
		{InTreeCloudVersion, "kubelet"},
		{InTreeCloudVersion, "kube-proxy"},
		{DefaultVersion, CloudControllerManager},
		{DefaultVersion, "kubectl"}, // not run by the lab: hack/krew's plugin install test runs it
		{DefaultVersion, ExternalSigner},
		{DefaultVersion, CredentialProviderBinary},
	}
}

// Needs lists the lab binaries a lab started with o runs: etcd, kube-apiserver of o.Version (the
// default when empty), kube-controller-manager with WithControllerManager, and with Nodes the
// controller manager, kube-scheduler, kubelet and kube-proxy (the controller manager and kubelet of
// Cloud.Version when set), with ExternalSigner the signer program, and with CredentialProvider
// the credential provider program. (A node's system programs, containerd and runc, are checked
// when it starts.)
func (o Options) Needs() []BinaryRef {
	v := o.Version
	if v == "" {
		v = DefaultVersion
	}
	cv := o.Cloud.version(v)
	out := []BinaryRef{{"", "etcd"}, {v, "kube-apiserver"}}
	if o.WithControllerManager || o.Nodes > 0 {
		out = append(out, BinaryRef{cv, "kube-controller-manager"})
	}
	if o.Nodes > 0 {
		out = append(out, BinaryRef{v, "kube-scheduler"}, BinaryRef{cv, "kubelet"}, BinaryRef{v, "kube-proxy"})
	}
	if o.ExternalSigner {
		out = append(out, BinaryRef{DefaultVersion, ExternalSigner})
	}
	if o.CredentialProvider != nil {
		out = append(out, BinaryRef{DefaultVersion, CredentialProviderBinary})
	}
	return out
}

// CheckBinaries returns an error naming every binary of refs missing from binDir.
func CheckBinaries(binDir string, refs []BinaryRef) error {
	var errs []error
	for _, b := range refs {
		if _, err := Binary(binDir, b.Version, b.Name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
