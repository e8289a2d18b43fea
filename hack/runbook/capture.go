// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/liveness"
	"github.com/credwatch/credwatch/pkg/watch"
)

// watchInterval is the interval of the captured watch (and of its replay).
const watchInterval = 2 * time.Second

// newIssuer is the issuer of the member the issuer-change capture adds.
const newIssuer = "https://issuer.credwatch.example"

// capture runs the runbook's lab scenarios on one real lab (kube-apiserver, etcd,
// kube-controller-manager) and writes what the runbook re-renders into dir:
//
//	watch-key-drift.json   every snapshot a `credwatch watch` fetched while a member with its own
//	                       service-account key joined and left again (replayed through pkg/watch)
//	check-key-drift.json   the full `credwatch check` snapshot with that member in the lab
//	check-issuer-change.json  the same with a member that accepts only a new issuer
//	check-controllers.json the same after kube-controller-manager stopped (its lease stale)
//	check-etcd-removed.json the same with a third member whose etcd member was removed while its
//	                       apiserver runs on behind a load balancer that checks TCP only
//	tokens/                a token minted through the drifted member, one through an original
//	                       member, the shared public key, and when they were minted
//	check-authn-config.json, authn/  on a lab of its own (captureAuthn): members whose
//	                       AuthenticationConfigurations drift, and what they logged
//
// only, when not empty, names the steps to take (keyDrift, issuerChange, controllers,
// etcdRemoved, authnConfig); the others' files are left as they are.
func capture(ctx context.Context, dir string, only ...string) (err error) {
	if err := os.MkdirAll(filepath.Join(dir, "tokens"), 0o755); err != nil {
		return err
	}
	if len(only) == 0 || slices.Contains(only, "authnConfig") {
		if err := captureAuthn(ctx, dir); err != nil {
			return err
		}
		if len(only) == 1 {
			return nil
		}
	}
	tmp, err := os.MkdirTemp("", "runbook-lab-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	l, err := lab.Up(ctx, lab.Options{Dir: tmp, Members: 2, WithControllerManager: true, Log: os.Stderr})
	if err != nil {
		return fmt.Errorf("lab up: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		err = errors.Join(err, l.Down(dctx))
	}()
	c := &capturer{l: l, dir: dir}
	steps := []struct {
		name string
		run  func(context.Context) error
	}{{"keyDrift", c.keyDrift}, {"issuerChange", c.issuerChange}, {"controllers", c.controllers},
		{"etcdRemoved", c.etcdRemoved}} // last: its member's apiserver is left running
	for _, st := range steps {
		if len(only) > 0 && !slices.Contains(only, st.name) {
			continue
		}
		if err := st.run(ctx); err != nil {
			return err
		}
	}
	return nil
}

// etcdRemoved is the first field report's chain: a third member joins, its etcd member is
// removed while its apiserver keeps running (Cluster API before v1.9 removed it before the
// drain), and the load balancer checks TCP only, as CAPA's classic ELB did, so it keeps sending
// new connections there.
func (c *capturer) etcdRemoved(ctx context.Context) error {
	m, err := c.l.AddMember(ctx, lab.MemberOptions{})
	if err != nil {
		return fmt.Errorf("etcd removed: add member: %w", err)
	}
	mode := c.l.LBMode()
	c.l.SetLBMode(lab.LBAll)
	defer c.l.SetLBMode(mode)
	if err := c.l.RemoveMember(ctx, m.Name, lab.RemoveOptions{KeepAPIServer: true}); err != nil {
		return fmt.Errorf("etcd removed: remove %s's etcd member: %w", m.Name, err)
	}
	// Long enough for its /readyz to report the etcd check failed.
	if err := sleep(ctx, 3*watchInterval); err != nil {
		return err
	}
	return c.snapshot(ctx, "check-etcd-removed.json")
}

type capturer struct {
	l   *lab.Lab
	dir string
}

func (c *capturer) checkConfig() check.Config {
	var eps []string
	for _, m := range c.l.Members() {
		eps = append(eps, m.URL)
	}
	return check.Config{REST: c.l.RESTConfig(), Endpoints: eps, CreateProbeSA: true, Timeout: 10 * time.Second,
		Cloud: check.CloudConfig{Skip: true}}
}

// snapshot runs check.Fetch and writes the snapshot as name.
func (c *capturer) snapshot(ctx context.Context, name string) error {
	snap, err := check.Fetch(ctx, c.checkConfig())
	if err != nil {
		return fmt.Errorf("%s: check: %w", name, err)
	}
	return writeJSON(filepath.Join(c.dir, name), captured(snap))
}

// capturedSnapshot is a check snapshot as the runbook keeps it: with each member's serving
// certificate fingerprint, which the snapshot's JSON leaves out and the load-balancer routing
// check needs to tell members apart.
type capturedSnapshot struct {
	*check.Snapshot
	ServingCerts map[string]string `json:"servingCerts,omitempty"` // member URL → SHA-256
}

func captured(s *check.Snapshot) capturedSnapshot {
	cs := capturedSnapshot{Snapshot: s, ServingCerts: map[string]string{}}
	for _, m := range s.Members {
		if m.ServingCert != "" {
			cs.ServingCerts[m.URL] = m.ServingCert
		}
	}
	return cs
}

// restore is the snapshot with its members' serving certificates put back.
func (cs capturedSnapshot) restore() *check.Snapshot {
	s := cs.Snapshot
	if s == nil {
		s = &check.Snapshot{}
	}
	for i := range s.Members {
		s.Members[i].ServingCert = cs.ServingCerts[s.Members[i].URL]
	}
	return s
}

// recorder is a watch.Config.Fetch that keeps every snapshot.
type recorder struct {
	mu    sync.Mutex
	snaps []*check.Snapshot
}

func (r *recorder) fetch(ctx context.Context, cfg check.MembersConfig) (*check.Snapshot, error) {
	s, err := check.FetchMembers(ctx, cfg)
	if err == nil {
		r.mu.Lock()
		r.snaps = append(r.snaps, s)
		r.mu.Unlock()
	}
	return s, err
}

func (c *capturer) keyDrift(ctx context.Context) error {
	rec := &recorder{}
	cfg := c.checkConfig()
	cfg.Endpoints = nil
	w, err := watch.New(watch.Config{Check: cfg, Interval: watchInterval, MetricsEvery: 1, Fetch: rec.fetch,
		Endpoints: func() []string {
			var out []string
			for _, m := range c.l.Members() {
				out = append(out, m.URL)
			}
			return out
		}})
	if err != nil {
		return err
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { w.Run(wctx); close(done) }()
	defer func() { stop(); <-done }()

	if err := sleep(ctx, 3*watchInterval); err != nil {
		return err
	}
	m, err := c.l.AddMember(ctx, lab.MemberOptions{SAKey: lab.SAKeyNew})
	if err != nil {
		return fmt.Errorf("key drift: add member: %w", err)
	}
	if err := sleep(ctx, 4*watchInterval); err != nil {
		return err
	}
	if err := c.snapshot(ctx, "check-key-drift.json"); err != nil {
		return err
	}
	if err := c.tokens(ctx, m.Name); err != nil {
		return err
	}
	if err := c.l.RemoveMember(ctx, m.Name, lab.RemoveOptions{}); err != nil {
		return fmt.Errorf("key drift: remove %s: %w", m.Name, err)
	}
	if err := sleep(ctx, 4*watchInterval); err != nil {
		return err
	}
	stop()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return writeJSON(filepath.Join(c.dir, "watch-key-drift.json"), rec.snaps)
}

// tokens mints the probe account's tokens through the drifted member and an original one.
func (c *capturer) tokens(ctx context.Context, drifted string) error {
	orig := c.l.Members()[0].Name
	minted := map[string]string{}
	for file, member := range map[string]string{"drifted-member.jwt": drifted, "original-member.jwt": orig} {
		cs, err := kubernetes.NewForConfig(c.l.MemberRESTConfig(member))
		if err != nil {
			return err
		}
		exp := int64(check.ProbeTokenSeconds)
		tr, err := cs.CoreV1().ServiceAccounts(check.DefaultProbeNamespace).CreateToken(ctx, check.DefaultProbeName,
			&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("mint through %s: %w", member, err)
		}
		if err := os.WriteFile(filepath.Join(c.dir, "tokens", file), []byte(tr.Status.Token+"\n"), 0o644); err != nil {
			return err
		}
		minted[file] = time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	pub, err := os.ReadFile(c.l.SharedSAPubFile())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.dir, "tokens", "shared-sa.pub"), pub, 0o644); err != nil {
		return err
	}
	return writeJSON(filepath.Join(c.dir, "tokens", "minted.json"), minted)
}

func (c *capturer) issuerChange(ctx context.Context) error {
	m, err := c.l.AddMember(ctx, lab.MemberOptions{Issuers: []string{newIssuer}})
	if err != nil {
		return fmt.Errorf("issuer change: add member: %w", err)
	}
	if err := c.snapshot(ctx, "check-issuer-change.json"); err != nil {
		return err
	}
	return c.l.RemoveMember(ctx, m.Name, lab.RemoveOptions{})
}

func (c *capturer) controllers(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.l.RESTConfig())
	if err != nil {
		return err
	}
	if err := c.l.StopControllerManager(ctx); err != nil {
		return fmt.Errorf("stop kube-controller-manager: %w", err)
	}
	for {
		st, err := liveness.LeaseStatus(ctx, cs, "kube-controller-manager", time.Now())
		if err == nil && st.Stale {
			break
		}
		if err := sleep(ctx, time.Second); err != nil {
			return fmt.Errorf("kube-controller-manager lease never went stale: %w", err)
		}
	}
	return c.snapshot(ctx, "check-controllers.json")
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// sleep waits d, or less when ctx ends (then its error).
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
	}
	return ctx.Err()
}
