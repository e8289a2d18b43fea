// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package tenant

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/bearer"
	"github.com/credwatch/credwatch/pkg/lab/tally"
)

// Options configures a Tenant.
type Options struct {
	// Namespace the tenant creates (if missing) and works in. Required.
	Namespace string
	// ServiceAccount the pods run as (created if missing). Default "tenant".
	ServiceAccount string
	// Pods is how many Pod objects (and so tokens and request loops) the tenant runs. Default 2.
	Pods int
	// NodeName is written into spec.nodeName (no such node exists; TokenRequest still embeds the
	// name). Default "lab-node-1", unless Unscheduled.
	NodeName string
	// Unscheduled leaves spec.nodeName empty: the pods stay Pending and their tokens carry no node.
	// For a cluster with a controller manager, whose pod garbage collector deletes pods bound to a
	// node that does not exist (and so invalidates their tokens) 40 s after it notices.
	Unscheduled bool
	// Interval between two requests of one pod. Default 100 ms.
	Interval time.Duration
	// RefreshEvery, when set, re-mints every token this often (accelerated refresh for tests)
	// instead of the kubelet's 80 %-of-lifetime rule.
	RefreshEvery time.Duration
	// ExpirationSeconds asked for in every TokenRequest. Default 3607, as the kubelet.
	ExpirationSeconds int64
	// Audiences asked for; nil means the API audiences, as the kubelet's default projected volume.
	Audiences []string
	// RequestTimeout bounds each request. Default 10 s.
	RequestTimeout time.Duration
	// MaxDuration stops the request loops after this long even if Stop is never called. Default 30 min.
	MaxDuration time.Duration
	// CA overrides the CA bundle used for bearer-token requests (default: the admin config's CA).
	CA []byte
	// Target is the URL the pods' requests go to (default: the admin config's Host). Setup and
	// TokenRequests go to the admin config's Host: a pod created and given its token through one
	// member, calling the API through the balancer.
	Target string
	// Log gets progress lines (nil: discard).
	Log io.Writer
}

func (o *Options) complete() error {
	if o.Namespace == "" {
		return errors.New("tenant namespace is not set")
	}
	if o.ServiceAccount == "" {
		o.ServiceAccount = "tenant"
	}
	if o.Pods == 0 {
		o.Pods = 2
	}
	if o.Pods < 1 || o.Pods > 100 {
		return fmt.Errorf("tenant pods %d: want 1..100", o.Pods)
	}
	if o.Unscheduled {
		o.NodeName = ""
	} else if o.NodeName == "" {
		o.NodeName = "lab-node-1"
	}
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.ExpirationSeconds == 0 {
		o.ExpirationSeconds = KubeletExpirationSeconds
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 10 * time.Second
	}
	if o.MaxDuration <= 0 {
		o.MaxDuration = 30 * time.Minute
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// Pod is one of the tenant's pods.
type Pod struct {
	Namespace      string    `json:"namespace"`
	Name           string    `json:"name"`
	UID            types.UID `json:"uid"`
	ServiceAccount string    `json:"serviceAccount"`
}

// Tenant is one simulated workload: a namespace of pods calling the API with their projected tokens.
type Tenant struct {
	o      Options
	admin  *rest.Config
	client kubernetes.Interface
	minter *http.Client // admin credentials, new connection per request
	bearer *http.Client // no client certificate, new connection per request

	tally tally.Tally

	mu      sync.Mutex
	pods    []Pod
	tokens  map[string]Token     // pod name -> current token
	refresh map[string]bool      // pod name -> forced refresh pending
	failed  map[string]time.Time // pod name -> last failed refresh
	cancel  context.CancelFunc
	done    chan struct{}
}

// New returns a tenant that will work through admin (a rest.Config whose Host is the load
// balancer, with credentials allowed to create namespaces, pods and tokens).
func New(admin *rest.Config, o Options) (*Tenant, error) {
	if err := o.complete(); err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: client: %w", o.Namespace, err)
	}
	minter, err := adminClient(admin, o.RequestTimeout)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", o.Namespace, err)
	}
	ca := o.CA
	if len(ca) == 0 {
		if ca, err = caOf(admin); err != nil {
			return nil, fmt.Errorf("tenant %s: %w", o.Namespace, err)
		}
	}
	bc, err := bearer.Client(ca, o.RequestTimeout)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: %w", o.Namespace, err)
	}
	t := &Tenant{o: o, admin: admin, client: client, minter: minter, bearer: bc, tokens: map[string]Token{}, refresh: map[string]bool{}, failed: map[string]time.Time{}}
	t.tally.Reset(time.Now())
	return t, nil
}

// Start creates the namespace, service account and pods, mints one token per pod and starts the
// request loops. It returns once every pod has its first token (or setup failed); the loops run
// until Stop, ctx is done or Options.MaxDuration has passed.
func (t *Tenant) Start(ctx context.Context) error {
	t.mu.Lock()
	if t.done != nil {
		t.mu.Unlock()
		return fmt.Errorf("tenant %s: already started", t.o.Namespace)
	}
	t.mu.Unlock()
	if err := t.Setup(ctx); err != nil {
		return err
	}
	for _, p := range t.Pods() {
		if err := t.mintFor(ctx, p); err != nil {
			return err
		}
	}
	loopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.o.MaxDuration)
	done := make(chan struct{})
	t.mu.Lock()
	t.cancel, t.done = cancel, done
	t.tally.SetPods(len(t.pods))
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range t.Pods() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.loop(loopCtx, p)
		}()
	}
	go func() {
		<-ctx.Done()
		cancel()
	}()
	go func() {
		wg.Wait()
		close(done)
	}()
	fmt.Fprintf(t.o.Log, "tenant %s: %d pods calling the API every %s\n", t.o.Namespace, len(t.Pods()), t.o.Interval)
	return nil
}

// Stop ends the request loops and waits for them. It deletes nothing.
func (t *Tenant) Stop() {
	t.mu.Lock()
	cancel, done := t.cancel, t.done
	t.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Snapshot returns a copy of the tallies; safe while the loops run.
func (t *Tenant) Snapshot() tally.Snapshot {
	s := t.tally.Snapshot()
	s.Namespace = t.o.Namespace
	return s
}

// Reset returns the tallies so far and starts counting afresh.
func (t *Tenant) Reset() tally.Snapshot {
	s := t.tally.Reset(time.Now())
	s.Namespace = t.o.Namespace
	return s
}

// Pods returns the tenant's pods.
func (t *Tenant) Pods() []Pod {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Pod(nil), t.pods...)
}

// Token returns the current token of a pod.
func (t *Tenant) Token(pod string) (Token, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok, ok := t.tokens[pod]
	return tok, ok
}

// RefreshAll makes every pod re-mint its token before its next request (as after a kubelet restart).
func (t *Tenant) RefreshAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.pods {
		t.refresh[p.Name] = true
	}
}

// Client is the tenant's admin clientset (through the load balancer).
func (t *Tenant) Client() kubernetes.Interface { return t.client }

// Options returns the completed options.
func (t *Tenant) Options() Options { return t.o }

// Setup creates the namespace, the service account and the pods (existing ones are reused) without
// minting tokens or starting the request loops. Start calls it.
func (t *Tenant) Setup(ctx context.Context) error {
	t.mu.Lock()
	ready := len(t.pods) > 0
	t.mu.Unlock()
	if ready {
		return nil
	}
	ns, sa := t.o.Namespace, t.o.ServiceAccount
	_, err := t.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"credwatch.dev/lab-tenant": "true"}}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("tenant %s: create namespace: %w", ns, err)
	}
	_, err = t.client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("tenant %s: create service account %s: %w", ns, sa, err)
	}
	var pods []Pod
	for i := range t.o.Pods {
		name := fmt.Sprintf("%s-%d", sa, i)
		p, err := createPod(ctx, t.client, ns, name, sa, t.o.NodeName)
		if err != nil {
			return fmt.Errorf("tenant %s: %w", ns, err)
		}
		pods = append(pods, p)
	}
	t.mu.Lock()
	t.pods = pods
	t.mu.Unlock()
	return nil
}

// createPod creates a pod that never runs (there is no kubelet; node "" leaves it unscheduled,
// held by a scheduling gate, since a cluster with workers would schedule it) or returns the
// existing one.
func createPod(ctx context.Context, c kubernetes.Interface, ns, name, sa, node string) (Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"credwatch.dev/lab-tenant": "true"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: sa,
			NodeName:           node,
			Containers:         []corev1.Container{{Name: "app", Image: "registry.invalid/credwatch/lab-tenant:never-pulled"}},
		},
	}
	if node == "" {
		pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "credwatch.dev/never-scheduled"}}
	}
	got, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		got, err = c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return Pod{}, fmt.Errorf("create pod %s: %w", name, err)
	}
	return Pod{Namespace: ns, Name: got.Name, UID: got.UID, ServiceAccount: sa}, nil
}

// mintFor obtains a pod's token through the load balancer, as the kubelet does.
func (t *Tenant) mintFor(ctx context.Context, p Pod) error {
	tok, err := mint(ctx, t.minter, t.admin.Host, MintRequest{
		Namespace: p.Namespace, ServiceAccount: p.ServiceAccount,
		Bound:             &Bound{Kind: "Pod", Name: p.Name, UID: p.UID},
		ExpirationSeconds: t.o.ExpirationSeconds, Audiences: t.o.Audiences,
	})
	t.tally.Minted(tok.MintedBy, err)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.tokens[p.Name] = tok
	delete(t.refresh, p.Name)
	delete(t.failed, p.Name)
	t.mu.Unlock()
	return nil
}

// retryAfter is how long a pod waits after a failed refresh (the kubelet retries on its next sync).
func (t *Tenant) retryAfter() time.Duration {
	if t.o.RefreshEvery > 0 {
		return t.o.RefreshEvery
	}
	return time.Minute
}

func (t *Tenant) due(p Pod, now time.Time) (Token, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok := t.tokens[p.Name]
	if t.refresh[p.Name] || tok.Value == "" {
		return tok, true
	}
	if f, ok := t.failed[p.Name]; ok && now.Sub(f) < t.retryAfter() {
		return tok, false
	}
	if t.o.RefreshEvery > 0 {
		return tok, now.Sub(tok.IssuedAt) >= t.o.RefreshEvery
	}
	return tok, tok.NeedsRefresh(now)
}

// loop is one pod's life: refresh the token when due, call the API, wait.
func (t *Tenant) loop(ctx context.Context, p Pod) {
	tick := time.NewTicker(t.o.Interval)
	defer tick.Stop()
	for {
		if tok, due := t.due(p, time.Now()); due {
			// A failed refresh keeps the old token, as the kubelet does until it expires.
			if err := t.mintFor(ctx, p); err != nil && ctx.Err() == nil && tok.Value != "" {
				t.mu.Lock()
				t.failed[p.Name] = time.Now()
				delete(t.refresh, p.Name)
				t.mu.Unlock()
			}
		}
		if tok, ok := t.Token(p.Name); ok && tok.Value != "" {
			res := bearer.Present(ctx, t.bearer, cmp.Or(t.o.Target, t.admin.Host), tok.Value)
			if ctx.Err() != nil {
				return
			}
			if res.Error != "" {
				t.tally.Fail(errors.New(res.Error))
			}
			// No reason: the in-process tenants' evidence lists samples, not reasons.
			t.tally.Request(time.Now(), p.Name, res.ServedBy, tok.MintedBy, res.Status, time.Since(tok.IssuedAt), "")
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}
