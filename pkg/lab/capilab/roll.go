// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/etcd"
)

// Phase is one thing that happened to the control plane during a roll, as the lab saw it.
type Phase struct {
	At      time.Time `json:"at"`
	What    string    `json:"what"` // one of the Phase* constants
	Machine string    `json:"machine"`
}

// The phases a roll goes through, for each machine.
const (
	PhaseMachineCreated = "machine created"
	PhaseJoined         = "kubeadm join done"     // the bootstrap sentinel
	PhaseMemberAdded    = "etcd member added"     // in the workload etcd's member list
	PhaseMachineRunning = "machine Running"       // Cluster API's phase
	PhaseMemberRemoved  = "etcd member removed"   // gone from the member list
	PhaseDeleting       = "machine being deleted" // deletionTimestamp: the drain starts
	PhaseMachineDeleted = "machine deleted"       // the Machine object is gone
	// PhaseOutOfRotation: the LabCluster's balancer sends the machine no new connection any more
	// (its health check failed enough times in a row, or it was deregistered).
	PhaseOutOfRotation = "out of rotation"
)

// PollEvery is how often Roll looks at the Machines, the workload etcd and the balancer: two
// phases seen in the same look are at most this far apart, in either order.
const PollEvery = 500 * time.Millisecond

// Roll is what one control-plane roll did.
type Roll struct {
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"`
	Before   []string  `json:"before"` // the machines replaced
	After    []string  `json:"after"`  // the machines that replaced them
	Phases   []Phase   `json:"phases"`
	Duration string    `json:"duration"`
	// DrainErrors counts the core manager's failed drains of the old machines ("error draining
	// Machine's node"); DrainError is the last one's message.
	DrainErrors int    `json:"drainErrors"`
	DrainError  string `json:"drainError,omitempty"`
	// OpenWhileOut is, by old machine, the most connections the balancer still passed through
	// to it at one time after it went out of rotation and before it was deregistered: a check
	// stops new connections only, so a client that keeps its connection stays on the machine.
	OpenWhileOut map[string]int `json:"openWhileOutOfRotation,omitempty"`
	// Blocked, when set, is why KubeadmControlPlane would not go on: the roll ended there.
	Blocked *Blocked `json:"blocked,omitempty"`
}

// Blocked is a roll KubeadmControlPlane refuses to go on with: a condition that blocks scale-up
// held False for BlockedAfter while no new machine was created.
type Blocked struct {
	Condition Condition `json:"condition"`
	Since     time.Time `json:"since"`
	// Replicas and UpToDate are the KubeadmControlPlane's counts then: fewer up to date than
	// replicas is the roll it was asked for and did not make.
	Replicas int64 `json:"replicas"`
	UpToDate int64 `json:"upToDate"`
}

// BlockedAfter is how long a blocking condition holds, with no new machine, before Roll ends with
// Roll.Blocked (KubeadmControlPlane retries its preflight every 15 s: two tries, and some).
const BlockedAfter = 40 * time.Second

// blocking are the KubeadmControlPlane conditions whose False stops a scale-up, by API version:
// v1.13+ no longer regenerates a missing <cluster>-sa once initialized and says
// "Cluster certificate for sa is not available, please check cluster certificate secrets"
// (controlplane/kubeadm/reconcilers/kubeadmcontrolplane/kubeadmcontrolplane_controller.go:654 at
// v1.14.2); its preflight then logs "Certificates are missing or unknown, can't join a new
// machine" (preflight.go:107).
func blocking(c Condition) bool {
	return c.Type == "CertificatesAvailable" && c.Status == "False"
}

// At is when what happened to machine, or the zero time.
func (r Roll) At(what, machine string) time.Time {
	for _, p := range r.Phases {
		if p.What == what && p.Machine == machine {
			return p.At
		}
	}
	return time.Time{}
}

// RollOptions are what the caller of Roll wants to hear while it runs.
type RollOptions struct {
	// Machines are the machines the roll replaces; default the control plane's when Roll starts
	// (a caller whose own change already started the roll names them as they were before it).
	Machines []string
	OnPhase  func(Phase)
}

// Roll sets the KubeadmControlPlane's spec.rolloutAfter to now, so that KubeadmControlPlane
// replaces every machine one at a time (maxSurge 1), and follows it until the control plane is
// back at its replicas with none of the old machines left, recording each phase with the time it
// was first seen (polled every 500 ms: the times are that precise). A roll KubeadmControlPlane
// refuses to start (see Blocked) ends with Roll.Blocked set and no error.
//
// o.OnPhase, when set, is called with each phase as it is first seen, on Roll's goroutine: it
// must return quickly (start anything long in a goroutine of its own).
func (c *Lab) Roll(ctx context.Context, o RollOptions) (Roll, error) {
	before, err := c.ControlPlane(ctx)
	if err != nil {
		return Roll{}, err
	}
	r := Roll{Started: time.Now(), Before: slices.Clone(o.Machines)}
	if len(r.Before) == 0 {
		for _, m := range before.Machines {
			r.Before = append(r.Before, m.Name)
		}
	}
	replicas := len(r.Before)
	cl := c.cfg.Cluster
	patch := fmt.Sprintf(`{"spec":{"rolloutAfter":%q}}`, r.Started.UTC().Format(time.RFC3339))
	if c.v1beta2() {
		patch = fmt.Sprintf(`{"spec":{"rollout":{"after":%q}}}`, r.Started.UTC().Format(time.RFC3339))
	}
	if _, err := c.kcp().Patch(ctx, cl.ControlPlaneName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return r, fmt.Errorf("capi lab: set rolloutAfter: %w", err)
	}
	fmt.Fprintf(c.cfg.Log, "capi lab: roll started (rolloutAfter %s) on %v\n", r.Started.UTC().Format(time.RFC3339), r.Before)
	seen := map[string]bool{}
	mark := func(what, machine string) {
		if k := what + "/" + machine; !seen[k] {
			seen[k] = true
			p := Phase{At: time.Now(), What: what, Machine: machine}
			r.Phases = append(r.Phases, p)
			fmt.Fprintf(c.cfg.Log, "capi lab: roll: %s %s after %s\n", machine, what, time.Since(r.Started).Round(100*time.Millisecond))
			if o.OnPhase != nil {
				o.OnPhase(p)
			}
		}
	}
	members := map[string]bool{}
	for _, m := range r.Before {
		members[m] = true
	}
	var blockedSince time.Time
	for {
		// A look through the cluster's endpoint is bounded: in a self-managed roll it may hang on
		// the storage-less member for as long as that member's request timeout.
		lctx, cancel := context.WithTimeout(ctx, lookTimeout)
		cp, err := c.ControlPlane(lctx)
		cancel()
		if err == nil {
			present := map[string]bool{}
			for _, m := range cp.Machines {
				present[m.Name] = true
				c.notePodLogs(m.Name)
				old := slices.Contains(r.Before, m.Name)
				if !old {
					mark(PhaseMachineCreated, m.Name)
					if h, ok := c.pool.Get(m.Name); ok && h.Bootstrapped() {
						mark(PhaseJoined, m.Name)
					}
					if m.Phase == "Running" {
						mark(PhaseMachineRunning, m.Name)
					}
				}
				if old && m.Deleting {
					mark(PhaseDeleting, m.Name)
				}
			}
			for _, m := range r.Before {
				if !present[m] {
					mark(PhaseMachineDeleted, m)
				}
			}
		}
		// The balancer and etcd are looked at whether or not the read through the cluster's
		// endpoint answered: in a self-managed roll that read hangs on the storage-less member,
		// and the removal must be seen when it happens, not when the reads answer again.
		if b := c.cloud.Balancer(namespace(cl), cl.Name); b != nil {
			backends, open := b.Backends(), b.Open()
			for _, m := range r.Before {
				if healthy, in := backends[m]; !in || !healthy {
					mark(PhaseOutOfRotation, m)
				}
				if healthy, in := backends[m]; in && !healthy && open[m] > r.OpenWhileOut[m] {
					if r.OpenWhileOut == nil {
						r.OpenWhileOut = map[string]int{}
					}
					r.OpenWhileOut[m] = open[m]
				}
			}
		}
		if listed, everywhere, err := c.etcdMembers(ctx); err == nil {
			for n := range listed {
				if !members[n] {
					members[n] = true
					mark(PhaseMemberAdded, n)
				}
			}
			for n := range members {
				if !everywhere[n] && slices.Contains(r.Before, n) {
					mark(PhaseMemberRemoved, n)
				}
			}
		}
		if err == nil {
			created := slices.ContainsFunc(cp.Machines, func(m Machine) bool { return !slices.Contains(r.Before, m.Name) })
			if i := slices.IndexFunc(cp.Conditions, blocking); i >= 0 && !created {
				if blockedSince.IsZero() {
					blockedSince = time.Now()
					fmt.Fprintf(c.cfg.Log, "capi lab: roll: KubeadmControlPlane %s=%s (%s): %s\n", cp.Conditions[i].Type, cp.Conditions[i].Status, cp.Conditions[i].Reason, cp.Conditions[i].Message)
				}
				if time.Since(blockedSince) >= BlockedAfter {
					r.Blocked = &Blocked{Condition: cp.Conditions[i], Since: blockedSince, Replicas: cp.Replicas, UpToDate: cp.Updated}
					r.Ended = time.Now()
					r.Duration = r.Ended.Sub(r.Started).Round(time.Second).String()
					sort.SliceStable(r.Phases, func(i, j int) bool { return r.Phases[i].At.Before(r.Phases[j].At) })
					fmt.Fprintf(c.cfg.Log, "capi lab: roll blocked for %s: %s\n", time.Since(blockedSince).Round(time.Second), cp.Conditions[i].Message)
					return r, nil
				}
			} else {
				blockedSince = time.Time{}
			}
			if cp.done(replicas) && !slices.ContainsFunc(cp.Machines, func(m Machine) bool { return slices.Contains(r.Before, m.Name) }) {
				for _, m := range cp.Machines {
					r.After = append(r.After, m.Name)
				}
				r.Ended = time.Now()
				r.Duration = r.Ended.Sub(r.Started).Round(time.Second).String()
				sort.SliceStable(r.Phases, func(i, j int) bool { return r.Phases[i].At.Before(r.Phases[j].At) })
				r.DrainErrors, r.DrainError = c.drainErrors()
				return r, nil
			}
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("capi lab: roll not done: %w (phases so far: %d)", ctx.Err(), len(r.Phases))
		case <-time.After(PollEvery):
		}
	}
}

// lookTimeout bounds one look of Roll at the Cluster API objects.
const lookTimeout = 5 * time.Second

// etcdMembers asks every running host's etcd for the workload etcd's members, each on its own
// (a hanging endpoint must not hide the others' answers), with kubeadm's
// apiserver-etcd-client certificate, and returns the names any answer lists and those every
// answer lists. A removed member that still runs keeps answering with its own stale list until its
// host stops, so a member is gone once one answer no longer lists it.
func (c *Lab) etcdMembers(ctx context.Context) (anyList, everyList map[string]bool, err error) {
	var endpoints []string
	conf := c.etcdTLS // every host's client certificate is signed by the cluster's one etcd CA
	for _, name := range c.pool.Names() {
		h, ok := c.pool.Get(name)
		if !ok || !h.Bootstrapped() {
			continue
		}
		endpoints = append(endpoints, "https://"+h.IP().String()+":2379")
		if conf == nil {
			conf, _ = etcdClientTLS(h.Node().EtcPath("kubernetes/pki"))
			c.etcdTLS = conf
		}
	}
	if conf == nil {
		return nil, nil, fmt.Errorf("capi lab: no bootstrapped host to ask etcd's members")
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	answers := make([][]etcd.APIMember, len(endpoints))
	errs := make([]error, len(endpoints))
	var wg sync.WaitGroup
	for i, ep := range endpoints {
		ec := c.etcdByURL[ep]
		if ec == nil {
			if c.etcdByURL == nil {
				c.etcdByURL = map[string]*etcd.Client{}
			}
			ec = etcd.NewTLSClient([]string{ep}, conf, 2*time.Second)
			c.etcdByURL[ep] = ec // one connection per member for the roll, not one per look
		}
		wg.Go(func() { answers[i], errs[i] = ec.MemberList(ctx) })
	}
	wg.Wait()
	anyList, everyList = map[string]bool{}, nil
	for i, ms := range answers {
		if errs[i] != nil {
			continue
		}
		listed := map[string]bool{}
		for _, m := range ms {
			if m.Name != "" {
				listed[m.Name], anyList[m.Name] = true, true
			}
		}
		if everyList == nil {
			everyList = listed
			continue
		}
		maps.DeleteFunc(everyList, func(n string, _ bool) bool { return !listed[n] })
	}
	if everyList == nil {
		return nil, nil, fmt.Errorf("capi lab: no etcd answered its member list: %w", errors.Join(errs...))
	}
	return anyList, everyList, nil
}

// etcdClientTLS is the TLS configuration of kubeadm's apiserver-etcd-client in pki.
func etcdClientTLS(pki string) (*tls.Config, error) {
	ca, err := os.ReadFile(pki + "/etcd/ca.crt")
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(pki+"/apiserver-etcd-client.crt", pki+"/apiserver-etcd-client.key")
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// drainErrors counts the core manager's "error draining" events in its log and returns the last
// message (klog's quoted event text, unquoted).
func (c *Lab) drainErrors() (int, string) {
	var data []byte
	for _, f := range c.coreManagerLogs() {
		b, err := os.ReadFile(f)
		if err == nil {
			data = append(data, b...)
		}
	}
	n, last := 0, ""
	for _, line := range strings.Split(string(data), "\n") {
		i := strings.Index(line, `"error draining Machine's node`)
		if i < 0 {
			continue
		}
		n++
		if msg, err := strconv.QuotedPrefix(line[i:]); err == nil {
			last, _ = strconv.Unquote(msg)
		}
	}
	return n, last
}
