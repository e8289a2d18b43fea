package cli

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

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
	k := &KubeFlags{Config: genericclioptions.NewConfigFlags(false), Known: known}
	k.Config.AddFlags(fs)
	for _, name := range []string{"cache-dir", "certificate-authority", "client-certificate", "client-key",
		"cluster", "user", "as", "as-group", "as-uid", "as-user-extra", "password", "username", "tls-server-name",
		"disable-compression", "request-timeout", "token", "insecure-skip-tls-verify", "server"} {
		_ = fs.MarkHidden(name)
	}
	fs.DurationVar(&k.Timeout, "timeout", 10*time.Second, "timeout of each API call")
	return k
}

// RESTConfig loads the client configuration the flags describe.
func (k *KubeFlags) RESTConfig() (*rest.Config, error) {
	cfg, err := k.Config.ToRESTConfig()
	if err != nil {
		return nil, Usage(fmt.Errorf("load kubeconfig: %w", err))
	}
	return k.tune(cfg), nil
}

// tune sets what every credwatch client shares: the per-call timeout, user agent and rate limits;
// and it adds the configuration's credentials to Known.
func (k *KubeFlags) tune(cfg *rest.Config) *rest.Config {
	if k.Known != nil {
		k.Known.Add(cfg.BearerToken, cfg.Password)
		if cfg.Password != "" { // as sent: an echoed header may be folded away from "Basic"
			k.Known.Add(base64.StdEncoding.EncodeToString([]byte(cfg.Username + ":" + cfg.Password)))
		}
		if cfg.BearerTokenFile != "" {
			// client-go reads the file again as it sends; a file it cannot read fails there.
			if b, err := os.ReadFile(cfg.BearerTokenFile); err == nil {
				k.Known.Add(strings.TrimSpace(string(b)))
			}
		}
	}
	cfg.Timeout = k.Timeout
	cfg.UserAgent = "credwatch"
	cfg.QPS, cfg.Burst = 50, 100
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
