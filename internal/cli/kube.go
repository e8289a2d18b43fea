// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/credwatch/credwatch/pkg/limits"
	"github.com/credwatch/credwatch/pkg/redact"
)

// KubeFlags are kubectl's connection flags (--kubeconfig, --context, ...), shared by every
// command that talks to a cluster. Rarely used ones are hidden, as stern does.
type KubeFlags struct {
	Config  *genericclioptions.ConfigFlags
	Timeout time.Duration
	// Known receives the credentials of every configuration loaded (its bearer token, the token
	// of its token file, its password), so that no output carries them; nil: none.
	Known *redact.Known
}

// NewKubeFlags registers the flags on fs; the credentials loaded go to known (Streams.Known).
func NewKubeFlags(fs *pflag.FlagSet, known *redact.Known) *KubeFlags {
	return newKubeFlags(fs, known, "")
}

// newKubeFlags is NewKubeFlags, with kubectl's -n/--namespace described by nsUsage when it is
// not empty.
func newKubeFlags(fs *pflag.FlagSet, known *redact.Known, nsUsage string) *KubeFlags {
	k := &KubeFlags{Config: genericclioptions.NewConfigFlags(false), Known: known}
	if nsUsage == "" {
		// A command that reads no namespace (watch looks at the control plane and every
		// namespace's tokens) does not offer -n/--namespace rather than accept and ignore it.
		k.Config.Namespace = nil
	}
	k.Config.AddFlags(fs)
	if nsUsage != "" {
		fs.Lookup("namespace").Usage = nsUsage
	}
	for _, name := range []string{"cache-dir", "certificate-authority", "client-certificate", "client-key",
		"cluster", "user", "as", "as-group", "as-uid", "as-user-extra", "password", "username", "tls-server-name",
		"disable-compression", "request-timeout", "token", "insecure-skip-tls-verify", "server"} {
		_ = fs.MarkHidden(name)
	}
	fs.DurationVar(&k.Timeout, "timeout", 10*time.Second, "timeout of each API call")
	return k
}

// NewKubeFlagsExcept is NewKubeFlags without the named kubectl flags, for a command whose own
// flag of that name means something else (for one release, the deprecated --cluster aliases of
// check, preflight and logs; cloud's --insecure-skip-tls-verify). What a left-out flag would set
// keeps its default.
func NewKubeFlagsExcept(fs *pflag.FlagSet, known *redact.Known, except ...string) *KubeFlags {
	return kubeFlagsExcept(fs, known, "", except)
}

// NewNamespacedKubeFlags is NewKubeFlagsExcept with kubectl's -n/--namespace, for a command that
// reads an object in a namespace; nsUsage is its help text. Namespace gives its value, the
// kubeconfig context's namespace when -n is not given.
func NewNamespacedKubeFlags(fs *pflag.FlagSet, known *redact.Known, nsUsage string, except ...string) *KubeFlags {
	return kubeFlagsExcept(fs, known, nsUsage, except)
}

func kubeFlagsExcept(fs *pflag.FlagSet, known *redact.Known, nsUsage string, except []string) *KubeFlags {
	kfs := pflag.NewFlagSet("kube", pflag.ContinueOnError)
	k := newKubeFlags(kfs, known, nsUsage)
	kfs.VisitAll(func(f *pflag.Flag) {
		if !slices.Contains(except, f.Name) {
			fs.AddFlag(f)
		}
	})
	return k
}

// NamespaceFlag is the value of -n/--namespace; "" when it is not given or not offered.
func (k *KubeFlags) NamespaceFlag() string {
	if k.Config.Namespace == nil {
		return ""
	}
	return *k.Config.Namespace
}

// Namespace is -n/--namespace, else the kubeconfig context's namespace (else "default").
func (k *KubeFlags) Namespace() (string, error) {
	ns, _, err := k.Config.ToRawKubeConfigLoader().Namespace()
	return ns, err
}

// Validate checks the flags' values and that no kubeconfig file is too large to load (client-go
// would read any size whole). Every way to a client configuration calls it first.
func (k *KubeFlags) Validate() error {
	if k.Timeout <= 0 {
		return Usagef("--timeout %s: must be positive", k.Timeout)
	}
	for _, p := range k.kubeconfigPaths() {
		if err := limits.Stat(p, limits.Kubeconfig); err != nil {
			return Usagef("kubeconfig %w", err)
		}
	}
	return nil
}

// kubeconfigPaths are the kubeconfig files client-go would load: --kubeconfig, else every path of
// $KUBECONFIG, else ~/.kube/config.
func (k *KubeFlags) kubeconfigPaths() []string {
	return k.Config.ToRawKubeConfigLoader().ConfigAccess().GetLoadingPrecedence()
}

// RESTConfig loads the client configuration the flags describe. A kubeconfig without a usable
// context is a usage error naming it (client-go would fall back to http://localhost:8080);
// in a pod with no kubeconfig, the pod's in-cluster configuration is used.
func (k *KubeFlags) RESTConfig() (*rest.Config, error) {
	if err := k.Validate(); err != nil {
		return nil, err
	}
	cfg, err := k.Config.ToRESTConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, k.noContext()
		}
		return nil, Usage(fmt.Errorf("load kubeconfig: %w", err))
	}
	if k.fellBack(cfg) {
		return nil, k.noContext()
	}
	if err := statReferenced(cfg); err != nil {
		return nil, err
	}
	return k.tune(cfg), nil
}

// fellBack says whether cfg is client-go's built-in default rather than anything the user
// configured: the default server, no --server, and no context naming a cluster with a server.
func (k *KubeFlags) fellBack(cfg *rest.Config) bool {
	if cfg.Host != clientcmd.ClusterDefaults.Server || k.Config.APIServer != nil && *k.Config.APIServer != "" {
		return false
	}
	raw, err := k.Config.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return false
	}
	name := raw.CurrentContext
	if k.Config.Context != nil && *k.Config.Context != "" {
		name = *k.Config.Context
	}
	ctx := raw.Contexts[name]
	return ctx == nil || raw.Clusters[ctx.Cluster] == nil || raw.Clusters[ctx.Cluster].Server == ""
}

// noContext is the usage error for a kubeconfig that names no cluster, or for no kubeconfig at all.
func (k *KubeFlags) noContext() error {
	var found []string
	for _, p := range k.kubeconfigPaths() {
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		return Usagef("no kubeconfig (%s not found) and not running in a pod: set --kubeconfig or $KUBECONFIG",
			strings.Join(k.kubeconfigPaths(), ", "))
	}
	return Usagef("kubeconfig %s: no usable context (current-context is empty or its cluster has no server): set current-context or --context",
		strings.Join(found, ", "))
}

// statReferenced bounds the files the configuration names, which client-go reads whole.
func statReferenced(cfg *rest.Config) error {
	var errs []error
	for _, p := range []string{cfg.BearerTokenFile, cfg.CAFile, cfg.CertFile, cfg.KeyFile} {
		if p != "" {
			errs = append(errs, limits.Stat(p, limits.Kubeconfig))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Usage(fmt.Errorf("kubeconfig: %w", err))
	}
	return nil
}

// Tune is tune for a client configuration read from elsewhere than the flags (a workload
// cluster's kubeconfig Secret on a management cluster).
func (k *KubeFlags) Tune(cfg *rest.Config) *rest.Config { return k.tune(cfg) }

// tune sets what every credwatch client shares: the per-call timeout, user agent, rate limits, a
// bound on each response body, and one-line errors for answers no API server gives; and it adds
// the configuration's credentials to Known.
func (k *KubeFlags) tune(cfg *rest.Config) *rest.Config {
	if k.Known != nil {
		k.Known.Add(cfg.BearerToken, cfg.Password)
		if cfg.Password != "" { // as sent: an echoed header may be folded away from "Basic"
			k.Known.Add(base64.StdEncoding.EncodeToString([]byte(cfg.Username + ":" + cfg.Password)))
		}
		if cfg.BearerTokenFile != "" {
			// client-go reads the file again as it sends; a file it cannot read fails there.
			if b, err := limits.ReadFile(cfg.BearerTokenFile, limits.Kubeconfig); err == nil {
				k.Known.Add(strings.TrimSpace(string(b)))
			}
		}
	}
	cfg.Timeout = k.Timeout
	cfg.UserAgent = "credwatch"
	cfg.QPS, cfg.Burst = 50, 100
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return limits.APIOnly(limits.Transport(rt, limits.Response, limits.Metrics))
	})
	return cfg
}

// Clientset builds a clientset from RESTConfig.
func (k *KubeFlags) Clientset() (*rest.Config, kubernetes.Interface, error) {
	cfg, err := k.RESTConfig()
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, Usage(fmt.Errorf("build client: %w", err))
	}
	return cfg, cs, nil
}
