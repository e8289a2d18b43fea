// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build linux

// Package lab implements `credwatch lab`: a real multi-member control plane on loopback addresses,
// run by a detached supervisor (`lab serve`) that the other subcommands talk to over a unix socket.
package lab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/lab/capi"
	"github.com/credwatch/credwatch/internal/cmd/lab/scenario"
	"github.com/credwatch/credwatch/internal/cmd/lab/tenants"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
)

// NewCommand returns `credwatch lab`.
func NewCommand(s cli.Streams) *cobra.Command {
	return cli.Group("lab", "Run a real multi-member Kubernetes control plane on this machine (etcd, kube-apiservers, load balancer)", `
The lab runs real kube-apiserver and etcd processes on 127.0.x.y addresses: N apiservers, each on
its own address and its own ("stacked") etcd member, behind a TCP load balancer, optionally with a
real kube-controller-manager. Membership changes mirror a control-plane rolling upgrade.

State (certificates, keys, kubeconfigs, logs, state.json, the supervisor's socket) lives in --dir,
default $XDG_STATE_HOME/credwatch/lab (~/.local/state/credwatch/lab). Binaries come from
$CREDWATCH_LAB_BIN or ./.lab-cache/bin (make lab-binaries).`,
		newUp(s), newDown(s), newStatus(s), newAddMember(s), newRemoveMember(s), newRoll(s), newPartition(s), newHeal(s), newTenantPods(s), newServe(s),
		scenario.NewCommand(s), tenants.NewCommand(s, DefaultDir()),
		capi.NewCommand(s, DefaultDir(), func(ctx context.Context, o lab.Options) error {
			_, err := startLab(ctx, s, o)
			return err
		}))
}

// services is the list of features the supervisor can host next to the lab (see
// supervisor.ServiceFactory); `lab tenants` and `lab capi` register their factories here.
func services() map[string]supervisor.ServiceFactory {
	return map[string]supervisor.ServiceFactory{tenants.ServiceName: tenants.Factory, capi.ServiceName: capi.Factory}
}

// DefaultDir is the lab directory used when --dir is not given.
func DefaultDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "credwatch", "lab")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "credwatch", "lab")
	}
	return ".lab"
}

// dirFlag is --dir, shared by every subcommand.
type dirFlag struct{ dir string }

func (d *dirFlag) add(fs *pflag.FlagSet) {
	fs.StringVar(&d.dir, "dir", DefaultDir(), "lab state directory")
}

func (d *dirFlag) abs() (string, error) {
	if d.dir == "" {
		return "", cli.Usagef("--dir: empty")
	}
	a, err := filepath.Abs(d.dir)
	if err != nil {
		return "", cli.Usagef("--dir %q: %v", d.dir, err)
	}
	return a, nil
}

// memberFlags are the per-new-member options of add-member and roll.
type memberFlags struct {
	version   string
	saKey     string
	issuers   []string
	audiences []string
	extra     []string
}

func (m *memberFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&m.version, "version", "", "kube-apiserver version of the new member(s) (default: the lab's; "+lab.DefaultVersion+" or "+lab.OldVersion+")")
	fs.StringVar(&m.saKey, "sa-key", lab.SAKeyShared, "service-account key of the new member(s): shared, new or a PEM private key FILE")
	fs.StringArrayVar(&m.issuers, "issuer", nil, "--service-account-issuer of the new member(s), repeatable; the first one signs (default: the lab's)")
	fs.StringSliceVar(&m.audiences, "api-audiences", nil, "--api-audiences of the new member(s) (default: unset)")
	fs.StringArrayVar(&m.extra, "apiserver-arg", nil, "extra kube-apiserver flag for the new member(s), repeatable (e.g. --apiserver-arg=--v=2)")
}

func (m *memberFlags) options() (lab.MemberOptions, error) {
	switch m.saKey {
	case lab.SAKeyShared, lab.SAKeyNew:
	default:
		if _, err := os.Stat(m.saKey); err != nil {
			return lab.MemberOptions{}, cli.Usagef("--sa-key %q: want shared, new or a PEM private key file (%v)", m.saKey, err)
		}
		a, err := filepath.Abs(m.saKey)
		if err != nil {
			return lab.MemberOptions{}, cli.Usagef("--sa-key %q: %v", m.saKey, err)
		}
		m.saKey = a
	}
	if m.version != "" && !validVersion(m.version) {
		return lab.MemberOptions{}, cli.Usagef("--version %q: want %s or %s", m.version, lab.DefaultVersion, lab.OldVersion)
	}
	for _, i := range m.issuers {
		if i == "" {
			return lab.MemberOptions{}, cli.Usagef("--issuer: empty")
		}
	}
	return lab.MemberOptions{Version: m.version, SAKey: m.saKey, Issuers: m.issuers, APIAudiences: m.audiences, ExtraArgs: m.extra}, nil
}

func validVersion(v string) bool { return v == lab.DefaultVersion || v == lab.OldVersion }

// supervisorErr maps a supervisor error to an exit code: unknown names and bad options are usage
// errors, an unreachable supervisor is exit 3.
func supervisorErr(err error) error {
	var se *supervisor.Error
	if errors.As(err, &se) {
		if se.Status == 400 || se.Status == 404 || se.Status == 409 {
			return cli.Usage(err)
		}
		return err
	}
	return cli.Unreachable(err)
}

// longOp is how long membership changes may take before the client gives up.
const longOp = 30 * time.Minute
