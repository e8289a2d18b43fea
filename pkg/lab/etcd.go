// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// etcdProc is one etcd member.
type etcdProc struct {
	name      string
	n         int // its control-plane host's number
	clientURL string
	peerURL   string
	dataDir   string
	logFile   string
	proc      *proc.Proc
	removed   bool
}

// newEtcd allocates the next etcd member's name and addresses.
func (l *Lab) newEtcd() *etcdProc {
	l.mu.Lock()
	l.nEtc++
	n := l.nEtc
	l.mu.Unlock()
	ip := l.etcdIP(n)
	name := fmt.Sprintf("etcd-%d", n)
	return &etcdProc{
		n:         n,
		name:      name,
		clientURL: fmt.Sprintf("http://%s:2379", ip),
		peerURL:   fmt.Sprintf("http://%s:2380", ip),
		dataDir:   l.path("etcd", name),
		logFile:   l.path("logs", name+".log"),
	}
}

func initialCluster(es []*etcdProc) string {
	var parts []string
	for _, e := range es {
		parts = append(parts, e.name+"="+e.peerURL)
	}
	return strings.Join(parts, ",")
}

func (l *Lab) startEtcd(ctx context.Context, e *etcdProc, cluster, state string) error {
	bin, err := Binary(l.o.BinDir, "", "etcd")
	if err != nil {
		return err
	}
	for _, u := range []string{e.clientURL, e.peerURL} {
		host := strings.TrimPrefix(u, "http://")
		if _, err := l.freePort(host[:strings.LastIndex(host, ":")], 2379, e.name); err != nil {
			return err
		}
	}
	args := []string{
		"--name=" + e.name,
		"--data-dir=" + e.dataDir,
		"--listen-client-urls=" + e.clientURL,
		"--advertise-client-urls=" + e.clientURL,
		"--listen-peer-urls=" + e.peerURL,
		"--initial-advertise-peer-urls=" + e.peerURL,
		"--initial-cluster=" + cluster,
		"--initial-cluster-state=" + state,
		"--initial-cluster-token=credwatch-lab",
		"--unsafe-no-fsync=true",
		"--snapshot-count=10000",
		"--quota-backend-bytes=1073741824",
	}
	_, netns, err := l.placeOn(ctx, e.n, "")
	if err != nil {
		return fmt.Errorf("%s: %w", e.name, err)
	}
	p, err := startProc(e.name, netns, bin, args, e.logFile)
	if err != nil {
		return err
	}
	e.proc = p
	l.mu.Lock()
	l.etcd = append(l.etcd, e)
	l.logs[e.name] = e.logFile
	l.mu.Unlock()
	return nil
}

// waitEtcd waits until the member reports healthy (bounded by Options.Wait).
func (l *Lab) waitEtcd(ctx context.Context, e *etcdProc) error {
	ctx, cancel := context.WithTimeout(ctx, l.o.Wait)
	defer cancel()
	for {
		if done, err := e.proc.Exited(); done {
			return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", e.name, err, e.logFile, proc.Tail(e.logFile, 20))
		}
		if etcdHealthy(ctx, e.clientURL) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy within %s: %w; last lines of %s:\n%s", e.name, l.o.Wait, ctx.Err(), e.logFile, proc.Tail(e.logFile, 20))
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func etcdHealthy(ctx context.Context, clientURL string) bool {
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

// liveEtcd returns the etcd members that are running and not removed, except skip.
func (l *Lab) liveEtcd(skip string) []*etcdProc {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*etcdProc
	for _, e := range l.etcd {
		if e.name == skip || e.removed {
			continue
		}
		if done, _ := e.proc.Exited(); done {
			continue
		}
		out = append(out, e)
	}
	return out
}

// etcdClient returns a client of the running members except skip.
func (l *Lab) etcdClient(skip string) (*etcdAPI, error) {
	var eps []string
	for _, e := range l.liveEtcd(skip) {
		eps = append(eps, e.clientURL)
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("no running etcd member left")
	}
	return newEtcdAPI(eps), nil
}

// addEtcd joins a new etcd member to the cluster and starts it.
func (l *Lab) addEtcd(ctx context.Context) (*etcdProc, error) {
	c, err := l.etcdClient("")
	if err != nil {
		return nil, err
	}
	e := l.newEtcd()
	var resp *etcdAddResponse
	err = retryUnhealthy(ctx, func(ctx context.Context) error {
		var err error
		resp, err = c.MemberAdd(ctx, []string{e.peerURL})
		return err
	})
	if err != nil {
		// A timeout under load may hide an add that happened: etcd then has the member already,
		// and asking again would add a second one that never starts.
		if added, lerr := addedMember(c, e.peerURL); lerr == nil && added != nil {
			l.logf("lab: etcd member add %s answered %v, but the member was added", e.name, err)
			resp, err = added, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("etcd member add %s: %w", e.name, err)
	}
	var parts []string
	for _, m := range resp.Members {
		name := m.Name
		if m.ID == resp.Member.ID {
			name = e.name
		}
		if name == "" || len(m.PeerURLs) == 0 {
			continue
		}
		parts = append(parts, name+"="+m.PeerURLs[0])
	}
	if err := l.startEtcd(ctx, e, strings.Join(parts, ","), "existing"); err == nil {
		err = l.waitEtcd(ctx, e)
		if err == nil {
			return e, nil
		}
	} else {
		l.logf("lab: %v", err)
	}
	rctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	rerr := c.MemberRemove(rctx, resp.Member.ID)
	e.proc.Stop(stopGrace)
	return nil, fmt.Errorf("start new etcd member %s: %w", e.name, errors.Join(err, rerr))
}

// addedMember is the MemberAdd answer for the member with peerURL when the cluster lists it (nil
// when it does not).
func addedMember(c *etcdAPI, peerURL string) (*etcdAddResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ms, err := c.MemberList(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if slices.Contains(m.PeerURLs, peerURL) {
			return &etcdAddResponse{Member: m, Members: ms}, nil
		}
	}
	return nil, nil
}

// removeEtcd removes a member from the etcd cluster and stops its process.
func (l *Lab) removeEtcd(ctx context.Context, name string) error {
	l.mu.Lock()
	idx := slices.IndexFunc(l.etcd, func(e *etcdProc) bool { return e.name == name })
	l.mu.Unlock()
	if idx < 0 {
		return fmt.Errorf("no etcd member %q", name)
	}
	c, err := l.etcdClient(name)
	if err != nil {
		return fmt.Errorf("remove etcd member %s: %w", name, err)
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	members, err := c.MemberList(lctx)
	cancel()
	if err != nil {
		return fmt.Errorf("etcd member list: %w", err)
	}
	for _, m := range members {
		if m.Name == name {
			err := retryUnhealthy(ctx, func(ctx context.Context) error {
				return c.MemberRemove(ctx, m.ID)
			})
			if err != nil {
				return fmt.Errorf("etcd member remove %s: %w", name, err)
			}
		}
	}
	l.mu.Lock()
	e := l.etcd[idx]
	e.removed = true
	l.mu.Unlock()
	e.proc.Stop(stopGrace)
	l.mu.Lock()
	l.etcd = slices.DeleteFunc(l.etcd, func(x *etcdProc) bool { return x == e })
	l.mu.Unlock()
	l.logf("lab: etcd member %s removed and stopped", name)
	return nil
}

// retryUnhealthy retries an etcd membership call for up to a minute while etcd refuses it with
// "unhealthy cluster" (a member joined less than etcd's 5-s health interval ago).
func retryUnhealthy(ctx context.Context, op func(context.Context) error) error {
	return RetryWhile(ctx, time.Minute, 30*time.Second, op, "unhealthy cluster")
}

// RetryWhile runs op (bounded by perTry each time) again, once a second, while its error says
// one of transient and within has not passed; it returns op's last error. op must be safe to
// repeat after such an error.
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
