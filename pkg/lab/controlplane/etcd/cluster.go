// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package etcd runs the lab's etcd cluster: member processes started from the lab-built binary,
// their health, and membership changes (add, remove) through Client, a small client of etcd's
// JSON gateway.
package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// Member is one etcd member.
type Member struct {
	Name      string
	N         int // its control-plane host's number: etcd-N
	ClientURL string
	PeerURL   string
	DataDir   string
	LogFile   string

	proc    *proc.Proc
	removed bool
}

// PID is the member's process id.
func (m *Member) PID() int { return m.proc.PID() }

// Config is what a Cluster needs from the lab.
type Config struct {
	Binary  string // the etcd binary
	DataDir string // members' data under DataDir/NAME
	LogDir  string // and logs in LogDir/NAME.log
	// IP is the address of member n's host.
	IP func(n int) string
	// Start starts the member's process with args on its host (the lab places it in the host's
	// network namespace and records its log).
	Start func(ctx context.Context, m *Member, bin string, args []string) (*proc.Proc, error)
	Wait  time.Duration // bound of WaitHealthy
	Grace time.Duration // between SIGTERM and SIGKILL
	Logf  func(format string, args ...any)
}

// Cluster is the lab's etcd members. Its methods are safe for concurrent use.
type Cluster struct {
	c       Config
	mu      sync.Mutex
	members []*Member
	n       int // last member number used
}

// NewCluster returns a cluster with no member yet.
func NewCluster(c Config) *Cluster { return &Cluster{c: c} }

// Next allocates the next member's name and addresses; Start runs it.
func (c *Cluster) Next() *Member {
	c.mu.Lock()
	c.n++
	n := c.n
	c.mu.Unlock()
	ip := c.c.IP(n)
	name := fmt.Sprintf("etcd-%d", n)
	return &Member{
		N:         n,
		Name:      name,
		ClientURL: fmt.Sprintf("http://%s:2379", ip),
		PeerURL:   fmt.Sprintf("http://%s:2380", ip),
		DataDir:   filepath.Join(c.c.DataDir, name),
		LogFile:   filepath.Join(c.c.LogDir, name+".log"),
	}
}

// InitialCluster is etcd's --initial-cluster for the members.
func InitialCluster(ms []*Member) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, m.Name+"="+m.PeerURL)
	}
	return strings.Join(parts, ",")
}

// Args are the member's flags for a cluster of cluster (--initial-cluster) in state "new" or
// "existing".
func (m *Member) Args(cluster, state string) []string {
	return []string{
		"--name=" + m.Name,
		"--data-dir=" + m.DataDir,
		"--listen-client-urls=" + m.ClientURL,
		"--advertise-client-urls=" + m.ClientURL,
		"--listen-peer-urls=" + m.PeerURL,
		"--initial-advertise-peer-urls=" + m.PeerURL,
		"--initial-cluster=" + cluster,
		"--initial-cluster-state=" + state,
		"--initial-cluster-token=credwatch-lab",
		"--unsafe-no-fsync=true",
		"--snapshot-count=10000",
		"--quota-backend-bytes=1073741824",
	}
}

// Start runs the member. It does not wait for health.
func (c *Cluster) Start(ctx context.Context, m *Member, cluster, state string) error {
	p, err := c.c.Start(ctx, m, c.c.Binary, m.Args(cluster, state))
	if err != nil {
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	m.proc = p
	c.mu.Lock()
	c.members = append(c.members, m)
	c.mu.Unlock()
	return nil
}

// WaitHealthy waits until the member reports healthy (bounded by Config.Wait).
func (c *Cluster) WaitHealthy(ctx context.Context, m *Member) error {
	return m.proc.WaitUntil(ctx, "healthy", c.c.Wait, 300*time.Millisecond, func(ctx context.Context) error {
		if !Healthy(ctx, m.ClientURL) {
			return errors.New("/health is not true")
		}
		return nil
	})
}

// Healthy reports whether etcd's /health at clientURL says true.
func Healthy(ctx context.Context, clientURL string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var h struct {
		Health string `json:"health"`
	}
	return resp.StatusCode == http.StatusOK && json.Unmarshal(body, &h) == nil && h.Health == "true"
}

// Members returns the started members that are not removed, in start order.
func (c *Cluster) Members() []*Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.members)
}

// Member returns a started member by name.
func (c *Cluster) Member(name string) (*Member, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.IndexFunc(c.members, func(m *Member) bool { return m.Name == name })
	if i < 0 {
		return nil, false
	}
	return c.members[i], true
}

// live returns the members that are running and not removed, except skip.
func (c *Cluster) live(skip string) []*Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Member
	for _, m := range c.members {
		if m.Name == skip || m.removed {
			continue
		}
		if done, _ := m.proc.Exited(); done {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Client returns a client of the running members except skip.
func (c *Cluster) Client(skip string) (*Client, error) {
	var eps []string
	for _, m := range c.live(skip) {
		eps = append(eps, m.ClientURL)
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("no running etcd member left")
	}
	return NewClient(eps), nil
}

// Stop stops every member (SIGTERM, then SIGKILL after Config.Grace) and forgets them.
func (c *Cluster) Stop() {
	c.mu.Lock()
	ms := c.members
	c.members = nil
	c.mu.Unlock()
	var procs []*proc.Proc
	for _, m := range ms {
		procs = append(procs, m.proc)
	}
	proc.StopAll(procs, c.c.Grace)
}

// Add joins a new member to the cluster and starts it.
func (c *Cluster) Add(ctx context.Context) (*Member, error) {
	cl, err := c.Client("")
	if err != nil {
		return nil, err
	}
	m := c.Next()
	resp, err := addMember(ctx, cl, m.PeerURL, 90*time.Second, 20*time.Second)
	if err != nil {
		// A timeout under load may hide an add that happened: etcd then has the member already,
		// and asking again would add a second one that never starts.
		actx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		added, lerr := addedMember(actx, cl, m.PeerURL)
		cancel()
		if lerr == nil && added != nil {
			c.c.Logf("lab: etcd member add %s answered %v, but the member was added", m.Name, err)
			resp, err = added, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("etcd member add %s: %w", m.Name, err)
	}
	var parts []string
	for _, am := range resp.Members {
		name := am.Name
		if am.ID == resp.Member.ID {
			name = m.Name
		}
		if name == "" || len(am.PeerURLs) == 0 {
			continue
		}
		parts = append(parts, name+"="+am.PeerURLs[0])
	}
	if err = c.Start(ctx, m, strings.Join(parts, ","), "existing"); err == nil {
		if err = c.WaitHealthy(ctx, m); err == nil {
			return m, nil
		}
		m.proc.Stop(c.c.Grace)
	} else {
		c.c.Logf("lab: %v", err)
	}
	rctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	rerr := cl.MemberRemove(rctx, resp.Member.ID)
	c.forget(m)
	return nil, fmt.Errorf("start new etcd member %s: %w", m.Name, errors.Join(err, rerr))
}

// addedMember is the MemberAdd answer for the member with peerURL when the cluster lists it (nil
// when it does not).
func addedMember(ctx context.Context, c *Client, peerURL string) (*AddResponse, error) {
	ms, err := c.MemberList(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if slices.Contains(m.PeerURLs, peerURL) {
			return &AddResponse{Member: m, Members: ms}, nil
		}
	}
	return nil, nil
}

// Remove removes a member from the etcd cluster and stops its process.
func (c *Cluster) Remove(ctx context.Context, name string) error {
	m, ok := c.Member(name)
	if !ok {
		return fmt.Errorf("no etcd member %q", name)
	}
	cl, err := c.Client(name)
	if err != nil {
		return fmt.Errorf("remove etcd member %s: %w", name, err)
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	members, err := cl.MemberList(lctx)
	cancel()
	if err != nil {
		return fmt.Errorf("etcd member list: %w", err)
	}
	for _, am := range members {
		if am.Name == name {
			err := retryUnhealthy(ctx, func(ctx context.Context) error {
				return cl.MemberRemove(ctx, am.ID)
			})
			if err != nil {
				return fmt.Errorf("etcd member remove %s: %w", name, err)
			}
		}
	}
	c.mu.Lock()
	m.removed = true
	c.mu.Unlock()
	m.proc.Stop(c.c.Grace)
	c.forget(m)
	c.c.Logf("lab: etcd member %s removed and stopped", name)
	return nil
}

func (c *Cluster) forget(m *Member) {
	c.mu.Lock()
	c.members = slices.DeleteFunc(c.members, func(x *Member) bool { return x == m })
	c.mu.Unlock()
}

// retryUnhealthy retries an etcd membership call for up to a minute while etcd refuses it with
// "unhealthy cluster" (a member joined less than etcd's 5-s health interval ago).
// addMember adds a member with peerURL, trying again (each try bounded by perTry) for up to
// within while the answer is transient. A try after the first asks first whether an earlier
// one was applied although its answer never came (a leader change under load): adding again
// would make a second member that never starts.
func addMember(ctx context.Context, cl *Client, peerURL string, within, perTry time.Duration) (*AddResponse, error) {
	var resp *AddResponse
	tries := 0
	err := RetryWhile(ctx, within, perTry, func(ctx context.Context) error {
		tries++
		if tries > 1 {
			if added, lerr := addedMember(ctx, cl, peerURL); lerr == nil && added != nil {
				resp = added
				return nil
			}
		}
		var err error
		resp, err = cl.MemberAdd(ctx, []string{peerURL})
		return err
	}, transientMembership...)
	return resp, err
}

// transientMembership are the answers to a membership change that a later try may not get:
// etcd refusing while a new member catches up, a leader change, or no answer within the try's
// bound (the proposal lost in an election, seen in CI as "context deadline exceeded" right after
// the leader itself was removed).
var transientMembership = []string{"unhealthy cluster", "leader changed", "request timed out", "context deadline exceeded"}

func retryUnhealthy(ctx context.Context, op func(context.Context) error) error {
	return RetryWhile(ctx, time.Minute, 30*time.Second, op, "unhealthy cluster")
}

// RetryWhile runs op (bounded by perTry each time) again, once a second, while its error says
// one of transient (etcd's "leader changed", "request timed out") and within has not passed; it
// returns op's last error. op must be safe to repeat after such an error.
func RetryWhile(ctx context.Context, within, perTry time.Duration, op func(context.Context) error, transient ...string) error {
	deadline := time.Now().Add(within)
	for {
		octx, cancel := context.WithTimeout(ctx, perTry)
		err := op(octx)
		cancel()
		if err == nil || time.Now().After(deadline) || !slices.ContainsFunc(transient, func(t string) bool { return strings.Contains(err.Error(), t) }) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}
