// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/etcd"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/pki"
	"github.com/credwatch/credwatch/pkg/lab/hostnet"
	"github.com/credwatch/credwatch/pkg/lab/oidc"
	"github.com/credwatch/credwatch/pkg/lab/proc"
	"github.com/credwatch/credwatch/pkg/lab/signer"
)

// stopGrace is how long a child gets between SIGTERM and SIGKILL.
const stopGrace = 10 * time.Second

// Lab is a running control plane. Its methods are safe for concurrent use.
type Lab struct {
	o Options
	x int // third octet of every address: 127.0.x.y, or 10.200.x.y on the lab network
	// reservation holds 127.0.x.1:6443 for the lab's lifetime on the hosts network (x names the
	// lab network too, so concurrent labs must not share it).
	reservation net.Listener
	hosts       *hostnet.Network // nil on the loopback network
	ca          *pki.CA
	lb          *lb.LoadBalancer
	tlsc        *tls.Config // admin client TLS config (CA + admin cert)

	adminCert, adminKey []byte

	opMu   sync.Mutex // serialises Up/Down/AddMember/RemoveMember/Roll/KCM changes
	mu     sync.Mutex // guards the fields below
	mems   []*memberProc
	etcd   *etcd.Cluster
	oidc   *oidc.Issuer // Options.OIDC
	kcm    *proc.Restarting
	sched  *proc.Restarting // kube-scheduler (labs with nodes)
	nodes  []*nodeProc
	nNode  int    // last node index used
	images string // the lab images tarball (labs with nodes)
	// registries maps each of Options.Registries to its forwarder's URL (labs with nodes).
	registries   map[string]string
	registryFwds []*lb.LoadBalancer

	kubeletArgsOnce sync.Once
	kubeletArgs     []string
	kubeletArgsErr  error
	logs            map[string]string // every member/etcd/kcm ever started -> log file
	nMem            int               // last apiserver index used
	down            bool
}

type memberProc struct {
	Member
	proc        *proc.Proc
	signer      *signer.Signer // nil without Options.ExternalSigner
	etcdRemoved bool
}

// Up starts a lab: PKI, etcd cluster, apiservers, load balancer and (optionally) the controller
// manager. On failure everything started so far is stopped.
func Up(ctx context.Context, o Options) (*Lab, error) {
	if err := o.complete(); err != nil {
		return nil, err
	}
	if err := CheckBinaries(o.BinDir, o.Needs()); err != nil {
		return nil, err
	}
	l := &Lab{o: o, logs: map[string]string{}}
	if err := l.prepareDir(); err != nil {
		return nil, err
	}
	if err := l.writePKI(); err != nil {
		return nil, err
	}
	etc, err := l.newEtcdCluster()
	if err != nil {
		return nil, err
	}
	l.etcd = etc
	ln, err := l.reserveAddresses()
	if err != nil {
		return nil, err
	}
	if o.Network == NetworkHosts {
		l.reservation = ln
		if ln, err = l.openNetwork(ctx); err != nil {
			_ = l.reservation.Close()
			return nil, err
		}
	}
	ready, err := lb.NewCheck(lb.CheckHTTPSReadyz, l.tlsc)
	if err != nil {
		return nil, err
	}
	l.lb = lb.New(ln, lb.Config{Mode: o.LBMode, Check: ready})
	l.logf("lab: load balancer on %s (mode %s), directory %s", l.LBAddress(), o.LBMode, o.Dir)
	if err := l.writeKubeconfigs(); err != nil {
		l.lb.Close()
		return nil, err
	}
	if err := l.startOIDC(ctx); err != nil {
		_ = l.Down(context.Background())
		return nil, err
	}
	if err := l.start(ctx); err != nil {
		_ = l.Down(context.Background())
		return nil, err
	}
	return l, nil
}

func (l *Lab) start(ctx context.Context) error {
	t0 := time.Now()
	var initial []*etcd.Member
	for i := 1; i <= l.o.EtcdMembers; i++ {
		initial = append(initial, l.etcd.Next())
	}
	cluster := etcd.InitialCluster(initial)
	for _, e := range initial {
		if err := l.etcd.Start(ctx, e, cluster, "new"); err != nil {
			return err
		}
	}
	for _, e := range initial {
		if err := l.etcd.WaitHealthy(ctx, e); err != nil {
			return err
		}
	}
	l.logf("lab: %d etcd members healthy after %s", len(initial), time.Since(t0).Round(time.Millisecond))
	if c := l.o.Cloud; c != nil && c.PrepareHosts != nil {
		if err := c.PrepareHosts(ctx, l); err != nil {
			return fmt.Errorf("lab: prepare the cloud's hosts: %w", err)
		}
	}
	var mems []*memberProc
	for i := 0; i < l.o.Members; i++ {
		m, err := l.startMember(ctx, MemberOptions{}, initial[i%len(initial)].Name)
		if err != nil {
			return err
		}
		mems = append(mems, m)
	}
	errs := make([]error, len(mems))
	var wg sync.WaitGroup
	for i, m := range mems {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = l.waitMember(ctx, m) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, m := range mems {
		l.lb.Add(m.Name, m.Address, true)
	}
	l.logf("lab: %d apiservers (%s) ready after %s", len(mems), l.o.Version, time.Since(t0).Round(time.Millisecond))
	if c := l.o.Cloud; c != nil && c.Prepare != nil {
		if err := c.Prepare(ctx, l); err != nil {
			return fmt.Errorf("lab: prepare the cloud: %w", err)
		}
	}
	if l.o.WithControllerManager {
		if err := l.StartControllerManager(ctx); err != nil {
			return err
		}
	}
	if err := l.startNodes(ctx); err != nil {
		return err
	}
	return l.saveState()
}

// Down stops apiservers, then the controller manager, then etcd, then the load balancer. It
// removes nothing from the lab directory and may be called more than once.
func (l *Lab) Down(ctx context.Context) error {
	l.opMu.Lock()
	defer l.opMu.Unlock()
	l.mu.Lock()
	mems := slices.Clone(l.mems)
	kcm := l.kcm
	l.down = true
	l.mu.Unlock()
	nodeErr := l.stopNodes(ctx)
	l.closeRegistries()
	var procs, signers []*proc.Proc
	for _, m := range mems {
		procs = append(procs, m.proc)
		if m.signer != nil {
			signers = append(signers, m.signer.Proc())
		}
	}
	proc.StopAll(procs, stopGrace)
	proc.StopAll(signers, stopGrace) // after the apiservers, which keep calling them until they stop
	kcm.Stop(stopGrace)
	l.sched.Stop(stopGrace)
	if l.oidc != nil {
		_ = l.oidc.Close()
	}
	if l.etcd != nil {
		l.etcd.Stop()
	}
	if l.lb != nil {
		l.lb.Close()
	}
	l.mu.Lock()
	l.mems, l.kcm = nil, nil
	l.mu.Unlock()
	netErr := l.closeNetwork(ctx)
	l.logf("lab: down")
	return errors.Join(nodeErr, netErr, l.saveState())
}

// Dir is the lab's state directory.
func (l *Lab) Dir() string { return l.o.Dir }

// Options returns the completed options the lab runs with.
func (l *Lab) Options() Options { return l.o }

// Members returns the running apiservers in start order.
func (l *Lab) Members() []Member {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Member, 0, len(l.mems))
	for _, m := range l.mems {
		out = append(out, cloneMember(m.Member))
	}
	return out
}

// Member returns one running apiserver by name.
func (l *Lab) Member(name string) (Member, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.mems {
		if m.Name == name {
			return cloneMember(m.Member), true
		}
	}
	return Member{}, false
}

func cloneMember(m Member) Member {
	m.Issuers = slices.Clone(m.Issuers)
	m.APIAudiences = slices.Clone(m.APIAudiences)
	m.SAPubFiles = slices.Clone(m.SAPubFiles)
	m.Args = slices.Clone(m.Args)
	return m
}

// CA returns the cluster CA certificate (PEM).
func (l *Lab) CA() []byte { return slices.Clone(l.ca.CertPEM()) }

// SharedSAKeyFile is the lab's shared service-account private key (PEM).
func (l *Lab) SharedSAKeyFile() string { return l.path("sa", "sa.key") }

// SharedSAPubFile is the public half of SharedSAKeyFile (PEM).
func (l *Lab) SharedSAPubFile() string { return l.path("sa", "sa.pub") }

// LBAddress is the load balancer's host:port.
func (l *Lab) LBAddress() string { return l.lb.Addr() }

// LBMode is the load balancer's current mode.
func (l *Lab) LBMode() LBMode { return l.lb.Mode() }

// SetLBMode switches the load balancer's mode for new connections.
func (l *Lab) SetLBMode(m LBMode) {
	l.lb.SetMode(m)
	_ = l.saveState()
}

// AdminKubeconfig is the path of a system:masters kubeconfig whose server is the load balancer.
func (l *Lab) AdminKubeconfig() string { return l.path("admin.kubeconfig") }

// MemberKubeconfig is the path of an admin kubeconfig whose server is that member directly.
func (l *Lab) MemberKubeconfig(name string) string { return l.path("kubeconfigs", name+".kubeconfig") }

// RESTConfig is an admin client configuration through the load balancer.
func (l *Lab) RESTConfig() *rest.Config { return l.restConfig("https://" + l.LBAddress()) }

// MemberRESTConfig is an admin client configuration straight to one member.
func (l *Lab) MemberRESTConfig(name string) *rest.Config {
	m, ok := l.Member(name)
	if !ok {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.restConfig("https://" + net.JoinHostPort(l.memberIP(name), "6443"))
	}
	return l.restConfig(m.URL)
}

func (l *Lab) restConfig(host string) *rest.Config {
	return &rest.Config{
		Host:  host,
		QPS:   100,
		Burst: 200,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   l.CA(),
			CertData: slices.Clone(l.adminCert),
			KeyData:  slices.Clone(l.adminKey),
		},
	}
}

// TLSConfig is an admin client TLS configuration (trusts the lab CA, presents the admin cert).
func (l *Lab) TLSConfig() *tls.Config { return l.tlsc.Clone() }

// MemberLog returns the whole log of a member (running or removed), an etcd member or
// "kube-controller-manager".
func (l *Lab) MemberLog(name string) ([]byte, error) {
	l.mu.Lock()
	f, ok := l.logs[name]
	l.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no lab member %q", name)
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return nil, fmt.Errorf("read log of %s: %w", name, err)
	}
	return data, nil
}

// AuthLines returns the member's "Unable to authenticate the request" log lines.
func (l *Lab) AuthLines(name string) ([]string, error) {
	data, err := l.MemberLog(name)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte("Unable to authenticate the request")) {
			out = append(out, sc.Text())
		}
	}
	return out, sc.Err()
}

// LogTail returns the last n lines of a member's log (for failure messages).
func (l *Lab) LogTail(name string, n int) string {
	l.mu.Lock()
	f, ok := l.logs[name]
	l.mu.Unlock()
	if !ok {
		return ""
	}
	return proc.Tail(f, n)
}

// LogNames lists every process the lab ever started (for log dumps).
func (l *Lab) LogNames() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for n := range l.logs {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (l *Lab) path(elem ...string) string {
	return filepath.Join(append([]string{l.o.Dir}, elem...)...)
}

func (l *Lab) logf(format string, args ...any) {
	fmt.Fprintf(l.o.Log, format+"\n", args...)
}

func (l *Lab) prepareDir() error {
	// A fresh start: old etcd data and logs of a previous lab in the same directory go.
	for _, d := range []string{"etcd", "logs"} {
		if err := os.RemoveAll(l.path(d)); err != nil {
			return fmt.Errorf("clean lab directory: %w", err)
		}
	}
	for _, d := range []string{"", "pki", "sa", "etcd", "logs", "kubeconfigs", "authn"} {
		if err := os.MkdirAll(l.path(d), 0o755); err != nil {
			return fmt.Errorf("create lab directory: %w", err)
		}
	}
	return nil
}

// reserveAddresses picks the third octet x so that 127.0.x.1:6443 is free and keeps that
// listener for the load balancer (which reserves x against concurrent labs).
func (l *Lab) reserveAddresses() (net.Listener, error) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(l.o.Dir + strconv.Itoa(os.Getpid())))
	start := int(h.Sum32() % 200)
	var lastErr error
	for i := 0; i < 200; i++ {
		x := 20 + (start+i)%200
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.%d.1:6443", x))
		if err != nil {
			lastErr = err
			continue
		}
		if hostnet.InUse(networkPrefix(x)) {
			// Its lab network is still there: a lab whose load balancer is gone but whose
			// network is not yet (teardown), or a leftover. Two labs on one x collide there.
			_ = ln.Close()
			lastErr = fmt.Errorf("lab network %s still exists", networkPrefix(x))
			continue
		}
		l.x = x
		return ln, nil
	}
	// Port 6443 is taken on every address (something listens on *:6443): any port will do.
	x := 20 + start
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.%d.1:0", x))
	if err != nil {
		return nil, fmt.Errorf("no free address for the load balancer (127.0.20-219.1:6443: %v): %w", lastErr, err)
	}
	l.logf("lab: port 6443 is in use on every 127.0.x.1 (%v); load balancer on %s", lastErr, ln.Addr())
	l.x = x
	return ln, nil
}

func (l *Lab) memberIP(name string) string {
	n := memberNumber(name)
	if l.hosts != nil {
		return l.hostAddr(n)
	}
	return fmt.Sprintf("127.0.%d.%d", l.x, 10+n)
}

func (l *Lab) etcdIP(n int) string {
	if l.hosts != nil {
		return l.hostAddr(n)
	}
	return fmt.Sprintf("127.0.%d.%d", l.x, 100+n)
}

// freePort returns port if ip:port can be bound, else another free port on ip.
func (l *Lab) freePort(ip string, port int, what string) (int, error) {
	if l.hosts != nil {
		return port, nil // a host's namespace is new: every port is free
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err == nil {
		_ = ln.Close()
		return port, nil
	}
	ln, err2 := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err2 != nil {
		return 0, fmt.Errorf("%s: %s:%d is in use (%v) and no other port is free: %w", what, ip, port, err, err2)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	l.logf("lab: %s: %s:%d is in use, using port %d", what, ip, port, p)
	return p, nil
}
