// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/keystone"
)

// The vSphere eras cloud-password-rotated runs in.
const (
	// InTree is the report's era: kube-controller-manager and kubelets of lab.InTreeCloudVersion
	// with --cloud-provider=vsphere and kubespray's cloud_config files.
	InTree = "in-tree"
	// External is the vSphere CPI's era: the cloud controller manager as a DaemonSet reading
	// its Secret.
	External = "external"
	// ExternalOpenStack is the same on OpenStack: a real Keystone (package keystone) and the
	// OpenStack cloud controller manager reading its cloud.conf Secret.
	ExternalOpenStack = "external-openstack"
)

// Eras lists the eras Start knows.
func Eras() []string { return []string{InTree, External, ExternalOpenStack} }

// The service account a lab started by Start is deployed with.
const (
	DefaultUser     = "k8s-vcp@vsphere.local"
	DefaultPassword = "Initial-Passw0rd-1"
)

// StartOptions configures Start.
type StartOptions struct {
	Era    string        // InTree or External
	Dir    string        // lab state; short (the nodes' socket paths are bounded); required
	BinDir string        // lab binaries (default lab.DefaultBinDir)
	Window time.Duration // per step (default 15 s)
	Log    io.Writer     // progress (nil: discard)
}

// Start starts the era's cloud (vCenter's simulator, or a Keystone) and a lab of one member and
// one node in it, and returns the scenario's Env on them; stop tears both down (also after a
// failed Run).
func Start(ctx context.Context, o StartOptions) (env *Env, stop func(context.Context) error, err error) {
	if o.Era == ExternalOpenStack {
		return startOpenStack(ctx, o)
	}
	if o.Dir == "" {
		return nil, nil, errors.New("cloud lab: no state directory")
	}
	if o.BinDir == "" {
		o.BinDir = lab.DefaultBinDir()
	}
	cfgDir := filepath.Join(o.Dir, "cloud")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("cloud lab: %w", err)
	}
	setup := &Setup{Dir: cfgDir, Nodes: NodeNames(2), User: DefaultUser, Password: DefaultPassword}
	lo := lab.Options{Dir: filepath.Join(o.Dir, "lab"), BinDir: o.BinDir, Members: 1, Nodes: 1, Log: o.Log}
	switch o.Era {
	case InTree:
		setup.Zones = true
		lo.Version, lo.Cloud, lo.KubeletRestart = lab.InTreeCloudVersion, setup.InTree(), KubeletServiceRestart
	case External:
		img, err := CCMImageTarball(o.BinDir, cfgDir)
		if err != nil {
			return nil, nil, err
		}
		lo.Cloud, lo.ExtraImages = setup.External(), []string{img}
	default:
		return nil, nil, fmt.Errorf("cloud lab: era %q: want one of %v", o.Era, Eras())
	}
	if err := lab.CheckBinaries(lo.BinDir, lo.Needs()); err != nil {
		return nil, nil, err
	}
	l, err := lab.Up(ctx, lo)
	if err != nil {
		setup.Close()
		return nil, nil, fmt.Errorf("cloud lab: start lab: %w", err)
	}
	stop = func(ctx context.Context) error {
		defer setup.Close()
		return l.Down(ctx)
	}
	if o.Era == InTree {
		env = InTreeEnv(l, setup)
	} else if env, err = ExternalEnv(l, External, CCMName, setup.VC, setup.WriteSecret); err != nil {
		return nil, nil, errors.Join(err, stop(context.WithoutCancel(ctx)))
	}
	env.Window, env.Log, env.Check = o.Window, o.Log, true
	return env, stop, nil
}

// InTreeEnv is the scenario's Env for the in-tree era on l: the controller manager is a host
// process of the lab, its credential the cloud_config files.
func InTreeEnv(l *lab.Lab, s *Setup) *Env {
	env := &Env{
		Lab: l, Account: s.VC, Era: InTree, Controller: "kube-controller-manager", Zones: s.Zones,
		ControllerLog: l.ControllerManagerLogFile(),
		RestartController: func(ctx context.Context) error {
			if err := l.StopControllerManager(ctx); err != nil {
				return err
			}
			return l.StartControllerManager(ctx)
		},
		Restore:      func(_ context.Context, pw string) error { return s.WriteInTreeConfigs(pw) },
		CloudConfigs: []string{s.ControllerConfig()},
	}
	for _, n := range s.Nodes {
		env.CloudConfigs = append(env.CloudConfigs, s.NodeConfig(n))
	}
	if s.Zones {
		// The node that joins after the sessions ended has no Node object to fall back on: its
		// kubelet exits at every start. The step waits for its service to have started it again
		// CrashLoopRestarts times.
		env.Await = map[string]func(context.Context) bool{"sessions-ended": func(context.Context) bool {
			nodes := l.Nodes()
			n, _, err := l.KubeletRestarts(nodes[len(nodes)-1].Name)
			return err == nil && n >= CrashLoopRestarts
		}}
	}
	return env
}

// KubeletServiceRestart is RestartSec of kubespray's kubelet.service (Restart=always): the in-tree
// era's kubelets run as that unit runs them.
const KubeletServiceRestart = 10 * time.Second

// CrashLoopRestarts is how many restarts of a kubelet the in-tree era with zones waits to see.
const CrashLoopRestarts = 3

// ExternalEnv is the scenario's Env for an external era on l whose cloud controller manager is
// the DaemonSet ccm and whose credential writeSecret puts in its Secret.
func ExternalEnv(l *lab.Lab, era, ccm string, acct Account, writeSecret func(context.Context, kubernetes.Interface, string) error) (*Env, error) {
	cs, err := kubernetes.NewForConfig(l.RESTConfig())
	if err != nil {
		return nil, fmt.Errorf("cloud lab: client: %w", err)
	}
	env := &Env{
		Lab: l, Account: acct, Era: era, Controller: "cloud-controller-manager",
		ControllerLog:     CCMLogGlob(l, ccm),
		RestartController: func(ctx context.Context) error { return RestartCCM(ctx, cs, ccm) },
		ControllerStatus:  func(ctx context.Context) string { return CCMStatus(ctx, cs, ccm) },
		Restore:           func(ctx context.Context, pw string) error { return writeSecret(ctx, cs, pw) },
	}
	// After the fix the step waits for the manager's new Pod to run ready, not only to log in.
	env.Await = map[string]func(context.Context) bool{
		"restored": func(ctx context.Context) bool { return env.ControllerStatus(ctx) == "healthy" },
	}
	return env, nil
}

// startOpenStack is Start for ExternalOpenStack: a Keystone on 127.0.0.1 whose service user the
// cluster is deployed with, relayed onto the lab network, and the OpenStack cloud controller
// manager as a DaemonSet.
func startOpenStack(ctx context.Context, o StartOptions) (*Env, func(context.Context) error, error) {
	if o.BinDir == "" {
		o.BinDir = lab.DefaultBinDir()
	}
	cfgDir := filepath.Join(o.Dir, "cloud")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("cloud lab: %w", err)
	}
	ks, err := keystone.Start(ctx, filepath.Join(o.Dir, "keystone"))
	if err != nil {
		return nil, nil, err
	}
	stack := &OpenStack{Admin: KeystoneAdmin{URL: ks.URL, AdminPassword: ks.AdminPassword, ServiceUserID: ks.ServiceUserID},
		User: ks.ServiceUser, Password: ks.ServicePassword, Project: ks.ServiceProject}
	closeCloud := func(ctx context.Context) error {
		stack.Close()
		return ks.Stop(ctx)
	}
	img, err := CCMImageTarball(o.BinDir, cfgDir)
	if err != nil {
		return nil, nil, errors.Join(err, closeCloud(context.WithoutCancel(ctx)))
	}
	lo := lab.Options{Dir: filepath.Join(o.Dir, "lab"), BinDir: o.BinDir, Members: 1, Nodes: 1, Log: o.Log,
		Cloud: stack.External(), ExtraImages: []string{img}}
	if err := lab.CheckBinaries(lo.BinDir, lo.Needs()); err != nil {
		return nil, nil, errors.Join(err, closeCloud(context.WithoutCancel(ctx)))
	}
	l, err := lab.Up(ctx, lo)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("cloud lab: start lab: %w", err), closeCloud(context.WithoutCancel(ctx)))
	}
	stop := func(ctx context.Context) error { return errors.Join(l.Down(ctx), closeCloud(ctx)) }
	env, err := OpenStackEnv(l, stack)
	if err != nil {
		return nil, nil, errors.Join(err, stop(context.WithoutCancel(ctx)))
	}
	env.Secrets = []string{ks.AdminPassword, ks.ServicePassword}
	env.Window, env.Log, env.Check = o.Window, o.Log, true
	return env, stop, nil
}

// OpenStackEnv is the scenario's Env for ExternalOpenStack on l, whose cloud o set up. Its steps
// also wait for what this era shows only after a crash and a back-off: the new node's manager
// Pod in BackOff after the sessions ended, and the manager crash-looping again after the
// restarts.
func OpenStackEnv(l *lab.Lab, o *OpenStack) (*Env, error) {
	env, err := ExternalEnv(l, ExternalOpenStack, OCCMName, o.KS, o.WriteSecret)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(l.RESTConfig())
	if err != nil {
		return nil, fmt.Errorf("cloud lab: client: %w", err)
	}
	env.Await["sessions-ended"] = warningSeen(cs, "Back-off restarting failed container "+OCCMName)
	env.Await["controller-restarted"] = func(ctx context.Context) bool {
		st := env.ControllerStatus(ctx)
		return strings.Contains(st, "CrashLoopBackOff") || strings.Contains(st, "exited 255")
	}
	env.Await["kubelet-restarted"] = env.Await["controller-restarted"]
	return env, nil
}

// warningSeen holds once a Warning Event's message contains sub.
func warningSeen(cs kubernetes.Interface, sub string) func(context.Context) bool {
	return func(ctx context.Context) bool {
		evs, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"})
		if err != nil {
			return false
		}
		return slices.ContainsFunc(evs.Items, func(e corev1.Event) bool { return strings.Contains(e.Message, sub) })
	}
}
