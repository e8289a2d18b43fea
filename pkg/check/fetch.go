// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/kubelet"
	"github.com/credwatch/credwatch/pkg/report"
)

type fetcher struct {
	c   *Config
	sc  scope
	cn  *conns
	cs  kubernetes.Interface // JSON, through the cluster endpoint
	pcs kubernetes.Interface // protobuf, for the kubelets' Events
	// big and bigMeta read the inventory's lists: protobuf, with no client-wide timeout (a list
	// from cache may carry a whole cluster; readList bounds each read).
	big     kubernetes.Interface
	bigMeta metadata.Interface

	mu   sync.Mutex
	snap *Snapshot
}

func (f *fetcher) miss(source string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snap.Sources[source] = ReasonOf(err)
}

// Fetch does all the I/O of a check once. It returns an error only for a configuration it cannot
// use; everything that fails on the cluster is recorded in Snapshot.Sources or on the member.
func Fetch(ctx context.Context, c Config) (*Snapshot, error) {
	return fetch(ctx, c, scope{})
}

func fetch(ctx context.Context, c Config, sc scope) (*Snapshot, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	cn := &conns{fresh: sc.fresh}
	defer cn.close()
	// Every client of this fetch, the members' included, disarms the stall bound with an answer.
	st := &stall{after: stallAfter * c.Timeout}
	ctx, release := st.arm(ctx)
	defer release()
	c.REST = rest.CopyConfig(c.REST)
	c.REST.Wrap(st.wrap)
	base := rest.CopyConfig(c.REST)
	base.Timeout = c.Timeout
	base.Wrap(func(rt http.RoundTripper) http.RoundTripper { return retry401{rt} })
	hc, err := cn.client(base, c.Timeout)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", base.Host, err)
	}
	cs, err := kubernetes.NewForConfigAndClient(base, hc)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", base.Host, err)
	}
	pb := rest.CopyConfig(base)
	pb.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	pb.ContentType = "application/vnd.kubernetes.protobuf"
	pcs, err := kubernetes.NewForConfigAndClient(pb, hc)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", base.Host, err)
	}
	big, bigMeta, err := bigClients(pb, cn)
	if err != nil {
		return nil, err
	}
	f := &fetcher{c: &c, sc: sc, cn: cn, cs: cs, pcs: pcs, big: big, bigMeta: bigMeta,
		snap: &Snapshot{Now: c.Now(), Server: base.Host, Sources: map[string]string{}, Reads: map[string]string{}}}

	var wg sync.WaitGroup
	wg.Go(func() { f.members(ctx) })
	if sc.membersOnly {
		wg.Wait()
		f.snap.explain(st)
		return f.snap, nil
	}
	wg.Go(func() {
		collectRead(f, SrcPods, func() ([]Pod, string, error) { return listPods(ctx, f.c, f.big) }, &f.snap.Pods)
	})
	wg.Go(func() {
		collectRead(f, SrcServiceAccounts, func() (int, string, error) {
			return countServiceAccounts(ctx, f.c, f.bigMeta, f.big.CoreV1().RESTClient())
		}, &f.snap.ServiceAccounts)
	})
	wg.Go(func() {
		collectRead(f, SrcSecrets, func() ([]LegacySecret, string, error) {
			return listLegacySecrets(ctx, f.c, f.bigMeta, f.big.CoreV1().RESTClient())
		}, &f.snap.LegacySecrets)
	})
	wg.Go(func() {
		collect(f, SrcLeases, func() ([]Lease, error) { return getLeases(ctx, f.c, f.cs, f.snap.Now) }, &f.snap.Leases)
	})
	wg.Go(func() {
		collectRead(f, SrcNodes, func() ([]Node, string, error) { return listNodes(ctx, f.c, f.big) }, &f.snap.Nodes)
	})
	wg.Go(func() {
		collect(f, SrcNodeEvents, func() ([]kubelet.Start, error) { return kubelet.ListStarts(ctx, f.pcs, largePage, f.c.Timeout) }, &f.snap.KubeletStarts)
	})
	wg.Go(func() {
		obs, skip := FetchCloud(ctx, f.cs, f.c.Cloud, f.snap.Now, f.c.Timeout)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.snap.Cloud = obs
		if skip != "" {
			f.snap.Sources[SrcCloud] = skip
		}
	})
	wg.Wait()
	f.snap.explain(st)
	return f.snap, nil
}

// explain says, in every reason a stopped fetch left, that the stall bound stopped it.
func (s *Snapshot) explain(st *stall) {
	for k, v := range s.Sources {
		s.Sources[k] = st.explain(v)
	}
	for i := range s.Members {
		m := &s.Members[i]
		for _, p := range []*string{&m.Error, &m.DiscoveryErr, &m.JWKSErr, &m.MintErr, &m.ReadyzErr, &m.MetricsErr} {
			*p = st.explain(*p)
		}
	}
}

// collect runs one fetch and stores its result in dst, or records source as unavailable.
func collect[T any](f *fetcher, source string, fetch func() (T, error), dst *T) {
	v, err := fetch()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.snap.Sources[source] = ReasonOf(err)
		return
	}
	*dst = v
}

// collectRead is collect for a list read by readList: it also records how it was read.
func collectRead[T any](f *fetcher, source string, fetch func() (T, string, error), dst *T) {
	var how string
	collect(f, source, func() (T, error) {
		v, h, err := fetch()
		how = h
		return v, err
	}, dst)
	if how != "" {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.snap.Reads[source] = how
	}
}

// bigClients are the clients of the inventory's lists: pb's protocol, no client-wide timeout.
func bigClients(pb *rest.Config, cn *conns) (kubernetes.Interface, metadata.Interface, error) {
	cfg := rest.CopyConfig(pb)
	cfg.Timeout = 0
	hc, err := cn.client(cfg, pb.Timeout)
	if err != nil {
		return nil, nil, fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, nil, fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	mc, err := metadata.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, nil, fmt.Errorf("metadata client for %s: %w", cfg.Host, err)
	}
	return cs, mc, nil
}

// members finds the members, asks each one directly, computes the trust matrix and fetches the
// public issuer.
func (f *fetcher) members(ctx context.Context) {
	var wg sync.WaitGroup
	var esCands, spCands candidates
	var esErr, spErr error
	ctx1, cancel := context.WithTimeout(ctx, f.c.Timeout)
	wg.Go(func() { esErr = fromEndpointSlices(ctx1, f.cs, &esCands) })
	wg.Go(func() { spErr = fromStaticPods(ctx1, f.cs, &spCands) })
	wg.Wait()
	cancel()
	if esErr != nil {
		f.miss(SrcEndpointSlices, esErr)
	}
	if spErr != nil {
		f.miss(SrcStaticPods, spErr)
	}
	cands, err := memberCandidates(spCands, esCands, f.c.Endpoints, esErr != nil && spErr != nil, f.sc.names, f.c.REST.Host)
	if err != nil {
		f.miss(SrcMembers, err)
		return
	}

	list := cands.list()
	members := make([]Member, len(list))
	clients := make([]*memberClient, len(list))
	for i, cd := range list {
		m := &members[i]
		m.URL, m.FoundBy, m.StaticPod, m.Flags = cd.url, cd.foundBy, cd.staticPod, cd.flags
		applyFlags(m)
		mc, err := newMemberClient(f.c.REST, cd.url, f.c, f.cn)
		if err != nil {
			m.Error = report.Plain(err.Error())
			continue
		}
		clients[i] = mc
		wg.Go(func() { probeMemberScoped(ctx, f.c, mc, m, f.sc.skipMetrics) })
	}
	var early *earlyMints
	if !f.sc.noMatrix {
		early = f.startMints(ctx, clients)
	}
	wg.Wait()
	nameMembers(members, f.sc.names)
	ca := f.c.ClusterAPI
	if f.c.ClusterAPIRead != nil {
		ca = f.c.ClusterAPIRead()
	}
	ca = ca.clone()
	relateMachines(members, ca)

	var routing *Routing
	if needsRouting(members, f.c.REST.Host) {
		wg.Go(func() { routing = probeRouting(ctx, f.c, routingConnections(len(members))) })
	}
	var (
		mx     *Matrix
		tokens []TokenProbe
		reason = "not asked: a read-only fetch mints no token"
	)
	if !f.sc.noMatrix {
		mx, tokens, reason = f.matrix(ctx, members, clients, early)
	}
	wg.Wait()
	var public *PublicIssuer
	if iss := publicIssuerOf(members, f.snap.Server); iss != "" {
		public = fetchPublic(ctx, f.c, iss)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	f.snap.Members = members
	f.snap.ClusterAPI = ca
	f.snap.Matrix = mx
	f.snap.Tokens = tokens
	f.snap.Routing = routing
	if reason != "" {
		f.snap.Sources[SrcMatrix] = reason
	}
	f.snap.Public = public
	if public != nil && public.Error != "" {
		f.snap.Sources[SrcPublicIssuer] = public.Error
	}
	var metricsErr []string
	for _, m := range members {
		if m.Reachable && m.MetricsErr != "" {
			metricsErr = append(metricsErr, m.Name+": "+m.MetricsErr)
		}
	}
	if len(metricsErr) > 0 {
		f.snap.Sources[SrcMetrics] = strings.Join(metricsErr, "; ")
	}
}

// applyFlags copies the credential configuration a static pod's command line shows.
func applyFlags(m *Member) {
	if m.Flags == nil {
		return
	}
	m.Issuers = m.Flags["service-account-issuer"]
	m.MaxTokenExpiration = last(m.Flags["service-account-max-token-expiration"])
	m.ExtendExpiration = last(m.Flags["service-account-extend-token-expiration"])
	m.JWKSURIFlag = last(m.Flags["service-account-jwks-uri"])
}

// nameMembers names members and keeps the names unique; known maps a URL to the name the
// member had before, used when it cannot say its own (a member found again by its address
// alone keeps its static pod's name: kubeadm's serving certificate names no member).
func nameMembers(members []Member, known map[string]string) {
	seen := map[string]int{}
	for i := range members {
		n := memberName(&members[i])
		if k := known[members[i].URL]; k != "" && ownName(&members[i]) == "" {
			n = k
		}
		seen[n]++
		if seen[n] > 1 {
			n = fmt.Sprintf("%s#%d", n, seen[n])
		}
		members[i].Name = n
	}
}

// publicIssuerOf returns the issuer most members sign with when it is an https URL not served
// by the cluster itself, else "".
func publicIssuerOf(members []Member, server string) string {
	var issuers []string
	for _, m := range members {
		if m.Reachable {
			issuers = append(issuers, signingIssuer(m))
		}
	}
	best, _ := mostCommon(issuers)
	if best == "" || clusterServed(best, members, server) {
		return ""
	}
	return best
}
