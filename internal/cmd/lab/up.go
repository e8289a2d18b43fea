// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build linux

package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
)

type upOptions struct {
	streams  cli.Streams
	dir      dirFlag
	opts     lab.Options
	lbMode   string
	network  string
	issuers  []string
	oidc     bool   // --oidc-issuer: opts.OIDC with its defaults
	credProv string // --credential-provider-audience: opts.CredentialProvider
}

func newUp(s cli.Streams) *cobra.Command {
	o := &upOptions{streams: s}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a lab: etcd cluster, kube-apiservers, load balancer (and a controller manager)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	cli.Examples(cmd, `  credwatch lab up --members 3
  credwatch lab up --version v1.30.14 --lb-mode all
  credwatch lab up --external-signer --signer-refresh-hint 5s
  credwatch lab up --oidc-issuer
  credwatch lab up --nodes 1 --credential-provider-audience registry.credwatch.lab
  export KUBECONFIG=$(credwatch lab status -o json | jq -r .lab.adminKubeconfig)`)
	f := cmd.Flags()
	o.dir.add(f)
	f.IntVar(&o.opts.Members, "members", 3, "number of kube-apiservers")
	f.IntVar(&o.opts.EtcdMembers, "etcd-members", 0, "number of etcd members (default: --members)")
	f.StringVar(&o.opts.Version, "version", lab.DefaultVersion, "kube-apiserver version: "+lab.DefaultVersion+" or "+lab.OldVersion)
	f.StringArrayVar(&o.issuers, "issuer", nil, "the lab's --service-account-issuer, repeatable (default "+lab.DefaultIssuer+")")
	f.BoolVar(&o.opts.WithControllerManager, "with-controller-manager", false, "also run a kube-controller-manager against the load balancer")
	f.StringVar(&o.lbMode, "lb-mode", string(lab.LBReady), "load balancer: ready (skip members whose /readyz fails) or all")
	f.IntVar(&o.opts.Nodes, "nodes", 0, "worker nodes (real kubelet, containerd, kube-proxy; needs --network hosts; brings kube-scheduler and the controller manager)")
	f.StringArrayVar(&o.opts.Registries, "registry", nil, "a plain-http registry on this machine's loopback (127.0.0.1:PORT) the nodes pull from under the same name, repeatable")
	f.StringVar(&o.network, "network", string(lab.NetworkHosts), "hosts (each member in its own network namespace on 10.200.x.0/24; needs root) or loopback (127.0.x.y)")
	f.BoolVar(&o.opts.ExternalSigner, "external-signer", false, "run an external JWT signer beside each member and start the members with --service-account-signing-endpoint instead of key files ("+lab.DefaultVersion+")")
	f.DurationVar(&o.opts.SignerRefreshHint, "signer-refresh-hint", 0, "with --external-signer: how often members fetch their signers' keys (default 60s)")
	f.BoolVar(&o.oidc, "oidc-issuer", false, "run the lab's OIDC issuer (discovery and JWKS over HTTPS on the load balancer's address) and start every member with an AuthenticationConfiguration trusting it ("+lab.DefaultVersion+"; audience "+lab.DefaultOIDCAudience+")")
	f.StringVar(&o.credProv, "credential-provider-audience", "", "with --nodes: run the lab's image credential provider in every kubelet for images of "+lab.DefaultCredentialProviderImages+", with service-account tokens of this audience ("+lab.DefaultVersion+")")
	f.DurationVar(&o.opts.Wait, "wait", 90*time.Second, "how long each member may take to become ready")
	return cmd
}

func (o *upOptions) complete() error {
	dir, err := o.dir.abs()
	if err != nil {
		return err
	}
	o.opts.Dir = dir
	o.opts.LBMode = lab.LBMode(o.lbMode)
	o.opts.Issuers = o.issuers
	o.opts.Network = lab.NetworkMode(o.network)
	if err := lab.ValidateNetworkMode(o.opts.Network); err != nil {
		return cli.Usagef("--network: %v", err)
	}
	if err := lab.ValidateLBMode(o.opts.LBMode); err != nil {
		return cli.Usagef("--lb-mode: %v", err)
	}
	if o.opts.Members < 1 || o.opts.Members > 50 {
		return cli.Usagef("--members %d: want 1..50", o.opts.Members)
	}
	if o.opts.EtcdMembers < 0 || o.opts.EtcdMembers > 50 {
		return cli.Usagef("--etcd-members %d: want 1..50", o.opts.EtcdMembers)
	}
	if !validVersion(o.opts.Version) {
		return cli.Usagef("--version %q: want %s or %s", o.opts.Version, lab.DefaultVersion, lab.OldVersion)
	}
	if o.opts.Wait <= 0 {
		return cli.Usagef("--wait %s: want a positive duration", o.opts.Wait)
	}
	o.opts.BinDir = lab.DefaultBinDir()
	if _, err := lab.Binary(o.opts.BinDir, o.opts.Version, "kube-apiserver"); err != nil {
		return cli.Usage(err)
	}
	if o.opts.Nodes < 0 || o.opts.Nodes > 20 {
		return cli.Usagef("--nodes %d: want 0..20", o.opts.Nodes)
	}
	if o.opts.Nodes > 0 && o.opts.Network != lab.NetworkHosts {
		return cli.Usagef("--nodes %d: nodes need --network hosts", o.opts.Nodes)
	}
	if o.oidc {
		if o.opts.Version != lab.DefaultVersion {
			return cli.Usagef("--oidc-issuer: AuthenticationConfiguration v1 needs %s (--version %s)", lab.DefaultVersion, o.opts.Version)
		}
		o.opts.OIDC = &lab.OIDCOptions{}
	}
	if o.credProv != "" {
		if o.opts.Nodes == 0 || o.opts.Version != lab.DefaultVersion {
			return cli.Usagef("--credential-provider-audience: needs --nodes and %s (--nodes %d, --version %s)", lab.DefaultVersion, o.opts.Nodes, o.opts.Version)
		}
		o.opts.CredentialProvider = &lab.CredentialProviderOptions{Audience: o.credProv}
	}
	if o.opts.ExternalSigner && o.opts.Version != lab.DefaultVersion {
		return cli.Usagef("--external-signer: the signer needs %s (--version %s)", lab.DefaultVersion, o.opts.Version)
	}
	if o.opts.SignerRefreshHint != 0 && (!o.opts.ExternalSigner || o.opts.SignerRefreshHint < time.Second) {
		return cli.Usagef("--signer-refresh-hint %s: want at least 1s, with --external-signer", o.opts.SignerRefreshHint)
	}
	need := []string{}
	if o.opts.WithControllerManager || o.opts.Nodes > 0 {
		need = append(need, "kube-controller-manager")
	}
	if o.opts.Nodes > 0 {
		need = append(need, "kube-scheduler", "kubelet", "kube-proxy")
	}
	if o.opts.ExternalSigner {
		need = append(need, lab.ExternalSigner)
	}
	if o.opts.CredentialProvider != nil {
		need = append(need, lab.CredentialProviderBinary)
	}
	for _, b := range need {
		if _, err := lab.Binary(o.opts.BinDir, o.opts.Version, b); err != nil {
			return cli.Usage(err)
		}
	}
	return nil
}

func (o *upOptions) run(ctx context.Context) error {
	st, err := startLab(ctx, o.streams, o.opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.streams.Out, "lab up in %s: %d members (%s), load balancer %s\nexport KUBECONFIG=%s\n",
		o.opts.Dir, len(st.Lab.Members), o.opts.Version, st.Lab.LBAddress, st.Lab.AdminKubeconfig)
	return nil
}

// startLab starts a supervisor for a lab with opts (opts.Dir must not hold a running lab) and
// follows its progress lines on streams until the lab is ready; Ctrl-C stops it.
func startLab(ctx context.Context, streams cli.Streams, opts lab.Options) (supervisor.State, error) {
	dir := opts.Dir
	c := supervisor.NewClient(dir)
	if st, err := c.Status(ctx, false); err == nil && st.Phase != supervisor.PhaseDown {
		return st, cli.Usagef("a lab is already %s in %s (credwatch lab down --dir %s)", st.Phase, dir, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return supervisor.State{}, fmt.Errorf("create lab directory: %w", err)
	}
	cfg := filepath.Join(dir, "options.json")
	data, err := json.MarshalIndent(opts, "", "  ")
	if err != nil {
		return supervisor.State{}, fmt.Errorf("encode lab options: %w", err)
	}
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		return supervisor.State{}, fmt.Errorf("write lab options: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return supervisor.State{}, fmt.Errorf("find credwatch executable: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, "supervisor.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return supervisor.State{}, fmt.Errorf("open supervisor log: %w", err)
	}
	defer logf.Close()
	sup := exec.Command(exe, "lab", "serve", "--dir", dir, "--config", cfg)
	sup.Stdout, sup.Stderr = logf, logf
	sup.Env = append(os.Environ(), "CREDWATCH_LAB_BIN="+opts.BinDir)
	sup.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := sup.Start(); err != nil {
		return supervisor.State{}, fmt.Errorf("start lab supervisor: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- sup.Wait() }()

	sigCtx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	seen := 0
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-sigCtx.Done():
			streams.Infof("interrupted: stopping the lab")
			dctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			_, _ = c.Down(dctx)
			if _, err := lab.KillLeftovers(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
				streams.Infof("%v", err)
			}
			return supervisor.State{}, cli.Silent(cli.ExitInterrupted)
		case err := <-exited:
			return supervisor.State{}, fmt.Errorf("lab supervisor exited (%v) before the lab was up; see %s:\n%s", err, logf.Name(), lastLines(logf.Name(), 20))
		case <-tick.C:
		}
		st, err := c.Status(sigCtx, false)
		if err != nil {
			continue // not listening yet
		}
		for ; seen < len(st.Log); seen++ {
			streams.Infof("%s", st.Log[seen])
		}
		switch st.Phase {
		case supervisor.PhaseReady:
			return st, nil
		case supervisor.PhaseFailed:
			return supervisor.State{}, fmt.Errorf("lab up: %s", st.Error)
		}
	}
}

func lastLines(file string, n int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	lines := splitLines(string(data))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}
