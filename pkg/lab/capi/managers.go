// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// WebhookPort is the core manager's webhook port; the bootstrap and control-plane managers take
// the next two.
const WebhookPort = 9443

// stopGrace is how long a manager has to exit after SIGTERM.
const stopGrace = 10 * time.Second

// Options configures Start.
type Options struct {
	Version string        // V181 or V184
	BinDir  string        // default: the lab's Options().BinDir
	Wait    time.Duration // for the CRDs and each manager's /readyz; default 2 minutes
	Log     io.Writer     // progress lines; default: discarded
}

// Managers are one release's three managers running against a lab.
type Managers struct {
	Release Release
	Dir     string // <lab dir>/capi-<version>: logs and the webhook serving certificate
	// WebhookHost is the address the managers' webhooks are served on for the apiservers: the lab
	// network's gateway (127.0.0.1 on the loopback network).
	WebhookHost string
	api         *api
	log         io.Writer
	procs       []*proc.Proc
	health      []string // each manager's health address (http://host:port)
	webhooks    []object // the webhook configurations created, to delete on Stop
}

// Start applies the release's CRDs to the lab, starts its three managers as children of this
// process against the lab's load balancer (admin kubeconfig, no leader election) with their
// webhooks on WebhookHost:9443-9445 and a serving certificate from the lab CA, waits for each
// /readyz, and registers the webhook configurations from the release's manifests with the URL
// and the lab CA in place of the in-cluster Service. On error everything started is stopped.
func Start(ctx context.Context, l *lab.Lab, o Options) (*Managers, error) {
	if o.BinDir == "" {
		o.BinDir = l.Options().BinDir
	}
	if o.Wait <= 0 {
		o.Wait = 2 * time.Minute
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	rel, err := Find(o.BinDir, o.Version)
	if err != nil {
		return nil, err
	}
	a, err := newAPI(l.RESTConfig())
	if err != nil {
		return nil, err
	}
	m := &Managers{Release: rel, Dir: filepath.Join(l.Dir(), "capi-"+o.Version), WebhookHost: "127.0.0.1", api: a, log: o.Log}
	if n := l.Network(); n != nil {
		m.WebhookHost = n.Gateway().String()
	}
	if err := m.start(ctx, l, o.Wait); err != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return nil, errors.Join(err, m.Stop(sctx))
	}
	return m, nil
}

func (m *Managers) start(ctx context.Context, l *lab.Lab, wait time.Duration) error {
	certDir := filepath.Join(m.Dir, "webhook-certs")
	if err := m.writeServingCert(l, certDir); err != nil {
		return err
	}
	conv := &Conversion{Base: map[string]string{}, CA: l.CA()}
	for i, mgr := range m.Release.Managers {
		conv.Base[mgr.Name] = m.webhookBase(i)
	}
	n, err := m.Release.InstallCRDs(ctx, m.api.dyn, wait, conv)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.log, "capi: %d CRDs of %s established\n", n, m.Release.Version)
	if err := m.writeInventory(ctx, wait); err != nil {
		return err
	}
	for i, mgr := range m.Release.Managers {
		if err := m.startManager(ctx, l, mgr, WebhookPort+i, certDir, wait); err != nil {
			return err
		}
	}
	return m.registerWebhooks(ctx, l.CA())
}

// registerWebhooks applies the managers' webhook configurations, calling WebhookHost with ca as
// the caBundle.
func (m *Managers) registerWebhooks(ctx context.Context, ca []byte) error {
	for i, mgr := range m.Release.Managers {
		objs, err := readObjects(mgr.Webhooks)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			hook, err := webhookConfiguration(obj, mgr.Name, m.webhookBase(i), ca)
			if err != nil {
				return fmt.Errorf("%s webhooks (%s): %w", mgr.Name, mgr.Webhooks, err)
			}
			if err := m.api.apply(ctx, hook); err != nil {
				return err
			}
			m.webhooks = append(m.webhooks, hook)
		}
	}
	fmt.Fprintf(m.log, "capi: %d webhook configurations registered on %s\n", len(m.webhooks), m.WebhookHost)
	return nil
}

// webhookBase is where the i-th manager serves its webhooks for the apiservers.
func (m *Managers) webhookBase(i int) string {
	return "https://" + net.JoinHostPort(m.WebhookHost, strconv.Itoa(WebhookPort+i))
}

// writeServingCert writes tls.crt and tls.key (the managers' default names) for WebhookHost.
func (m *Managers) writeServingCert(l *lab.Lab, dir string) error {
	ip := net.ParseIP(m.WebhookHost)
	certPEM, keyPEM, err := l.IssueCertificate("capi-webhooks", nil, []net.IP{ip}, nil, true)
	if err != nil {
		return fmt.Errorf("issue the capi webhook serving certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("capi webhook certificate directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o644); err != nil {
		return fmt.Errorf("write the capi webhook certificate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600); err != nil {
		return fmt.Errorf("write the capi webhook key: %w", err)
	}
	return nil
}

func (m *Managers) startManager(ctx context.Context, l *lab.Lab, mgr Manager, webhookPort int, certDir string, wait time.Duration) error {
	// The managers have no --webhook-host: the server listens on every interface, so one
	// release runs on this machine at a time. Say so rather than show a bind error in a log tail.
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(webhookPort))
	if err != nil {
		return fmt.Errorf("%s webhook port %d is taken (another Cluster API lab running?): %w", mgr.Name, webhookPort, err)
	}
	_ = ln.Close()
	healthPort, err := freeLoopbackPort()
	if err != nil {
		return fmt.Errorf("%s health port: %w", mgr.Name, err)
	}
	diagPort, err := freeLoopbackPort()
	if err != nil {
		return fmt.Errorf("%s diagnostics port: %w", mgr.Name, err)
	}
	args := []string{
		"--kubeconfig=" + l.AdminKubeconfig(),
		"--leader-elect=false",
		"--webhook-port=" + strconv.Itoa(webhookPort),
		"--webhook-cert-dir=" + certDir,
		"--health-addr=127.0.0.1:" + strconv.Itoa(healthPort),
		"--diagnostics-address=127.0.0.1:" + strconv.Itoa(diagPort),
		"--insecure-diagnostics",
	}
	p, err := proc.Start(proc.Spec{
		Name: mgr.Name, Bin: mgr.Binary, Args: args, LogFile: filepath.Join(m.Dir, mgr.Name+".log"),
		Env: append(os.Environ(), "GOMAXPROCS=2"),
	})
	if err != nil {
		return err
	}
	m.procs = append(m.procs, p)
	health := "http://127.0.0.1:" + strconv.Itoa(healthPort)
	m.health = append(m.health, health)
	if err := waitReady(ctx, p, health+"/readyz", wait); err != nil {
		return err
	}
	fmt.Fprintf(m.log, "capi: %s %s ready (webhooks on :%d, health on %s)\n", mgr.Name, m.Release.Version, webhookPort, health)
	return nil
}

// Running reports, for each manager in order, whether it is still running.
func (m *Managers) Running() []bool {
	out := make([]bool, len(m.procs))
	for i, p := range m.procs {
		done, _ := p.Exited()
		out[i] = !done
	}
	return out
}

// LogFiles are the managers' logs, in order.
func (m *Managers) LogFiles() []string {
	out := make([]string, len(m.procs))
	for i, p := range m.procs {
		out[i] = p.LogFile
	}
	return out
}

// HealthURLs are the managers' health addresses (http://127.0.0.1:PORT; /readyz and /healthz).
func (m *Managers) HealthURLs() []string { return append([]string(nil), m.health...) }

// Stop deletes the webhook configurations Start registered (so the lab's apiservers stop calling
// them) and stops the managers. The CRDs and the objects stay, so another release can be started
// against the same lab.
func (m *Managers) Stop(ctx context.Context) error {
	var errs []error
	for _, w := range m.webhooks {
		if err := m.api.delete(ctx, w); err != nil {
			errs = append(errs, err)
		}
	}
	m.webhooks = nil
	proc.StopAll(m.procs, stopGrace) // a stopped Proc stays stopped: Stop may run twice
	return errors.Join(errs...)
}

// waitReady polls url until it answers 200, p exits or wait passes; the error carries the tail of
// p's log.
func waitReady(ctx context.Context, p *proc.Proc, url string, wait time.Duration) error {
	c := &http.Client{Timeout: 2 * time.Second}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.Name, err, p.LogFile, proc.Tail(p.LogFile, 25))
		}
		req, err := http.NewRequestWithContext(wctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("%s readyz request: %w", p.Name, err)
		}
		if resp, err := c.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("%s not ready at %s within %s; last lines of %s:\n%s", p.Name, url, wait, p.LogFile, proc.Tail(p.LogFile, 25))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// freeLoopbackPort is a TCP port free on 127.0.0.1 at the time of asking.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("listen on a free loopback port: %w", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
