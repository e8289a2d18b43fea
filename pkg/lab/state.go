// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/apiserver"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/etcd"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
	"github.com/credwatch/credwatch/pkg/lab/hostnet"
	"github.com/credwatch/credwatch/pkg/lab/node"
	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// Status is a snapshot of a lab, also written to <dir>/state.json after every change.
type Status struct {
	Dir       string      `json:"dir"`
	Version   string      `json:"version"`
	LBAddress string      `json:"lbAddress"`
	LBMode    LBMode      `json:"lbMode"`
	Network   NetworkMode `json:"network,omitempty"`
	// NetworkPrefix names the lab's network namespaces (<prefix>-cp-1, ...; hosts network only).
	NetworkPrefix string `json:"networkPrefix,omitempty"`
	// Hosts are the lab network's hosts (hosts network only).
	Hosts           []hostnet.Host `json:"hosts,omitempty"`
	AdminKubeconfig string         `json:"adminKubeconfig"`
	SharedSAKeyID   string         `json:"sharedSAKeyID,omitempty"`
	// OIDCIssuer is the URL of the lab's OIDC issuer (Options.OIDC).
	OIDCIssuer        string         `json:"oidcIssuer,omitempty"`
	Members           []MemberStatus `json:"members"`
	Etcd              []EtcdStatus   `json:"etcd"`
	Nodes             []NodeStatus   `json:"nodes,omitempty"`
	ControllerManager *ProcStatus    `json:"controllerManager,omitempty"`
	Scheduler         *ProcStatus    `json:"scheduler,omitempty"`
	Down              bool           `json:"down,omitempty"`
}

// MemberStatus is one apiserver's state.
type MemberStatus struct {
	Member
	PID         int    `json:"pid"`
	SignerPID   int    `json:"signerPid,omitempty"` // its external signer (Options.ExternalSigner)
	KeyID       string `json:"keyID,omitempty"`
	Ready       bool   `json:"ready"`
	InLB        bool   `json:"inLB"`
	EtcdRemoved bool   `json:"etcdRemoved,omitempty"`
	Health      string `json:"health,omitempty"`
}

// EtcdStatus is one etcd member's state.
type EtcdStatus struct {
	Name      string `json:"name"`
	ClientURL string `json:"clientURL"`
	PeerURL   string `json:"peerURL"`
	PID       int    `json:"pid"`
	Healthy   bool   `json:"healthy"`
	LogFile   string `json:"logFile"`
}

// ProcStatus is the controller manager's state.
type ProcStatus struct {
	PID     int    `json:"pid"`
	Running bool   `json:"running"`
	LogFile string `json:"logFile"`
	// Restarts counts the times it exited and was started again (the kubelet's back-off), and
	// LastExit says how the last run ended.
	Restarts int    `json:"restarts,omitempty"`
	LastExit string `json:"lastExit,omitempty"`
}

// PIDs lists every process id recorded in the status.
func (s Status) PIDs() []int {
	var out []int
	for _, m := range s.Members {
		out = append(out, m.PID)
		if m.SignerPID != 0 {
			out = append(out, m.SignerPID)
		}
	}
	if s.Scheduler != nil {
		out = append(out, s.Scheduler.PID)
	}
	if s.ControllerManager != nil {
		out = append(out, s.ControllerManager.PID)
	}
	for _, e := range s.Etcd {
		out = append(out, e.PID)
	}
	for _, n := range s.Nodes {
		for _, pid := range n.PIDs {
			out = append(out, pid)
		}
	}
	return out
}

// Status returns the lab's state; with probe it also checks every member's /readyz and every
// etcd member's /health directly.
func (l *Lab) Status(ctx context.Context, probe bool) Status {
	l.mu.Lock()
	s := Status{
		Dir: l.o.Dir, Version: l.o.Version, LBAddress: l.LBAddress(), LBMode: l.lb.Mode(),
		AdminKubeconfig: l.AdminKubeconfig(), Down: l.down, Network: l.o.Network,
	}
	if l.hosts != nil {
		s.NetworkPrefix, s.Hosts = l.hosts.Prefix(), l.hosts.Hosts()
	}
	for _, m := range l.mems {
		s.Members = append(s.Members, MemberStatus{Member: cloneMember(m.Member), PID: m.proc.PID(), SignerPID: m.signer.PID(), EtcdRemoved: m.etcdRemoved})
	}
	for _, n := range l.nodes {
		s.Nodes = append(s.Nodes, n.status)
	}
	if l.etcd != nil {
		for _, e := range l.etcd.Members() {
			s.Etcd = append(s.Etcd, EtcdStatus{Name: e.Name, ClientURL: e.ClientURL, PeerURL: e.PeerURL, PID: e.PID(), LogFile: e.LogFile})
		}
	}
	if l.oidc != nil {
		s.OIDCIssuer = l.oidc.URL()
	}
	s.ControllerManager = controllerStatus(l.kcm, l.ControllerManagerLogFile())
	s.Scheduler = controllerStatus(l.sched, l.SchedulerLogFile())
	l.mu.Unlock()
	s.SharedSAKeyID, _ = pki.KeyIDFromPublicKeyFile(l.SharedSAPubFile())
	inLB := l.lb.Backends()
	for i := range s.Members {
		m := &s.Members[i]
		ready, ok := inLB[m.Name]
		m.InLB, m.Ready = ok, ready
		if len(m.SAPubFiles) > 0 {
			m.KeyID, _ = pki.KeyIDFromPublicKeyFile(m.SAPubFiles[0])
		}
	}
	if probe {
		l.probe(ctx, &s)
	}
	return s
}

func (l *Lab) probe(ctx context.Context, s *Status) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: l.tlsc, DisableKeepAlives: true}}
	var wg sync.WaitGroup
	for i := range s.Members {
		wg.Add(1)
		go func(m *MemberStatus) {
			defer wg.Done()
			if err := apiserver.Readyz(ctx, c, m.URL); err != nil {
				m.Ready, m.Health = false, err.Error()
			} else {
				m.Ready, m.Health = true, "ok"
			}
		}(&s.Members[i])
	}
	for i := range s.Etcd {
		wg.Add(1)
		go func(e *EtcdStatus) { defer wg.Done(); e.Healthy = etcd.Healthy(ctx, e.ClientURL) }(&s.Etcd[i])
	}
	wg.Wait()
}

// StateFile is where a lab records its status (and the pids of its processes).
func StateFile(dir string) string { return dir + "/state.json" }

func (l *Lab) saveState() error {
	s := l.Status(context.Background(), false)
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode lab state: %w", err)
	}
	tmp := StateFile(l.o.Dir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write lab state: %w", err)
	}
	if err := os.Rename(tmp, StateFile(l.o.Dir)); err != nil {
		return fmt.Errorf("write lab state: %w", err)
	}
	return nil
}

// ReadState reads <dir>/state.json.
func ReadState(dir string) (Status, error) {
	data, err := os.ReadFile(StateFile(dir))
	if err != nil {
		return Status{}, fmt.Errorf("read lab state: %w", err)
	}
	s, err := ParseState(data)
	if err != nil {
		return s, fmt.Errorf("lab state %s: %w", StateFile(dir), err)
	}
	return s, nil
}

// ParseState decodes a state.json document.
func ParseState(data []byte) (Status, error) {
	var s Status
	if err := json.Unmarshal(data, &s); err != nil {
		return Status{}, err
	}
	return s, nil
}

// KillLeftovers SIGKILLs the processes recorded in dir's state.json that still run one of the
// lab's binaries with dir on their command line (so a reused pid is never hit). It returns the
// pids it signalled.
func KillLeftovers(dir string) ([]int, error) {
	s, err := ReadState(dir)
	if err != nil {
		return nil, err
	}
	var killed []int
	for _, pid := range s.PIDs() {
		if pid <= 1 || !processMentions(pid, dir) {
			continue
		}
		proc.KillPIDs([]int{pid})
		killed = append(killed, pid)
	}
	var errs []error
	for _, n := range s.Nodes {
		if err := node.Cleanup(n.Dir, n.CgroupRoot); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n.Name, err))
		}
	}
	// The Cluster API lab's hosts (package kubeadm's Pool) and its managers are not in the state:
	// the hosts record themselves in their directories, the managers name the lab's on their
	// command lines.
	hosts, _ := filepath.Glob(filepath.Join(dir, CAPIHostsDir, "*"))
	for _, h := range hosts {
		if err := node.CleanupDir(h); err != nil {
			errs = append(errs, fmt.Errorf("capi host %s: %w", filepath.Base(h), err))
		}
	}
	killed = append(killed, killMentioning(dir+"/", CAPIManagers)...)
	if err := errors.Join(errs...); err != nil {
		return killed, err
	}
	if s.NetworkPrefix != "" {
		time.Sleep(200 * time.Millisecond) // let the killed processes leave their namespaces
		if err := hostnet.Cleanup(context.Background(), s.NetworkPrefix); err != nil {
			return killed, err
		}
	}
	return killed, nil
}

// CAPIHostsDir is the directory of a lab's Cluster API hosts, under the lab directory.
const CAPIHostsDir = "capi-hosts"

// CAPIManagers are the Cluster API managers' binary names (package capi starts them).
var CAPIManagers = []string{"cluster-api-controller", "kubeadm-bootstrap-controller", "kubeadm-control-plane-controller"}

// killMentioning SIGKILLs every process running one of the programs names (by base name) whose
// command line contains s (a path inside the lab directory), and returns their pids.
func killMentioning(s string, names []string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		argv0, _, _ := strings.Cut(string(data), "\x00")
		if err != nil || !slices.Contains(names, filepath.Base(argv0)) || !strings.Contains(string(data), s) {
			continue
		}
		proc.KillPIDs([]int{pid})
		out = append(out, pid)
	}
	return out
}

func processMentions(pid int, dir string) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && strings.Contains(string(data), dir)
}

func insecureTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // local health probe of a self-signed endpoint
}

func controllerStatus(r *proc.Restarting, logFile string) *ProcStatus {
	if r == nil {
		return nil
	}
	n, last := r.Restarts()
	return &ProcStatus{PID: r.Current().PID(), Running: r.Running(), LogFile: logFile, Restarts: n, LastExit: last}
}
