// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package platform is the lab's stand-in for the controllers a platform team runs on a
// management cluster (Flux, Kyverno, cert-manager, operators): a program (hack/labimages/platform)
// that holds a leader-election Lease, keeps an informer on its namespace's ConfigMaps and, while
// it leads, writes a ConfigMap every interval — with its own projected service-account token,
// through client-go's in-cluster configuration, as they do. Like a controller-runtime manager it
// exits when it loses its lease, so the kubelet restarts it and the Pod's restart count says how
// often that happened. It writes one JSON line per event (Event) to stdout; client-go's own
// words (leader election's "failed to renew lease", the reflector's list errors) go to stderr
// through klog, as in any controller's log. The lab reads both back from the container logs.
package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config is one platform controller.
type Config struct {
	Name      string // the Lease's name and the ConfigMap's prefix; required
	Namespace string // required
	Pod       string // the identity in the Lease and on every line; required
	// Interval is the time between writes while leading; default 2 s.
	Interval time.Duration
	// LeaseDuration, RenewDeadline and RetryPeriod are leader election's; defaults those of
	// controller-runtime (15 s, 10 s, 2 s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Summary is the time between summary lines; default 30 s.
	Summary time.Duration
}

// The events a controller writes.
const (
	EventStarted    = "started"     // the process runs
	EventLeading    = "leading"     // it acquired the Lease
	EventLost       = "lost-lease"  // it lost it: the process exits
	EventWriteError = "write-error" // a write while leading failed
	EventListError  = "list-error"  // the informer's list or watch failed
	EventSummary    = "summary"     // counts since the start
)

// Event is one line of a controller's output.
type Event struct {
	Time    time.Time `json:"t"`
	Pod     string    `json:"pod"`
	Event   string    `json:"event"`
	Status  int32     `json:"status,omitempty"` // the API status of a failed call, 0 if none
	Reason  string    `json:"reason,omitempty"`
	Message string    `json:"message,omitempty"`
	Writes  int       `json:"writes,omitempty"` // summary: writes that succeeded
	Errors  int       `json:"errors,omitempty"` // summary: writes that failed
	Seen    int       `json:"seen,omitempty"`   // summary: ConfigMap events the informer delivered
}

// ParseEvent reads one output line; ok is false for any other line (klog's, a partial line).
func ParseEvent(line []byte) (Event, bool) {
	var e Event
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Event == "" {
		return Event{}, false
	}
	return e, true
}

// ErrLostLease is Run's error when the controller lost its Lease.
var ErrLostLease = errors.New("leader election lost")

func (c *Config) complete() error {
	if c.Name == "" || c.Namespace == "" || c.Pod == "" {
		return errors.New("platform controller: a name, a namespace and a pod name are required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Interval, 2*time.Second)
	def(&c.LeaseDuration, 15*time.Second)
	def(&c.RenewDeadline, 10*time.Second)
	def(&c.RetryPeriod, 2*time.Second)
	def(&c.Summary, 30*time.Second)
	return nil
}

// Run runs the controller until ctx ends (nil) or it loses its Lease (ErrLostLease).
func Run(ctx context.Context, c Config, cs kubernetes.Interface, out io.Writer) error {
	if err := c.complete(); err != nil {
		return err
	}
	w := &writer{out: out, pod: c.Pod}
	w.emit(Event{Event: EventStarted})
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 10*time.Minute, informers.WithNamespace(c.Namespace))
	inf := factory.Core().V1().ConfigMaps().Informer()
	if err := inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		w.emit(failure(EventListError, err))
	}); err != nil {
		return fmt.Errorf("platform controller: %w", err)
	}
	count := func(any) { w.delivered() }
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: count, DeleteFunc: count,
		UpdateFunc: func(_, n any) { count(n) }}); err != nil {
		return fmt.Errorf("platform controller: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	go w.summaries(ctx, c.Summary)

	lost := make(chan struct{})
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: c.Pod},
		},
		LeaseDuration: c.LeaseDuration, RenewDeadline: c.RenewDeadline, RetryPeriod: c.RetryPeriod,
		ReleaseOnCancel: true, Name: c.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				w.emit(Event{Event: EventLeading})
				w.lead(lctx, c, cs)
			},
			OnStoppedLeading: func() { close(lost) },
		},
	})
	if err != nil {
		return fmt.Errorf("platform controller: %w", err)
	}
	le.Run(ctx) // returns when ctx ends or the lease is lost
	w.summary()
	select {
	case <-lost:
		if ctx.Err() == nil {
			w.emit(Event{Event: EventLost, Message: ErrLostLease.Error()})
			return ErrLostLease
		}
	default:
	}
	return nil
}

// lead writes the status ConfigMap every interval until lctx ends.
func (w *writer) lead(lctx context.Context, c Config, cs kubernetes.Interface) {
	cms := cs.CoreV1().ConfigMaps(c.Namespace)
	name := c.Name + "-status"
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(lctx, 5*time.Second)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace},
			Data: map[string]string{"holder": c.Pod, "at": time.Now().UTC().Format(time.RFC3339Nano)}}
		_, err := cms.Update(cctx, cm, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			_, err = cms.Create(cctx, cm, metav1.CreateOptions{})
		}
		cancel()
		if err != nil && lctx.Err() == nil {
			w.emit(failure(EventWriteError, err))
		}
		w.wrote(err == nil)
		select {
		case <-lctx.Done():
			return
		case <-t.C:
		}
	}
}

// failure is the event of a failed call, with the API status when there is one.
func failure(event string, err error) Event {
	e := Event{Event: event, Message: err.Error()}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		e.Status, e.Reason = st.Status().Code, string(st.Status().Reason)
	}
	return e
}

// writer serializes the output lines and keeps the counts.
type writer struct {
	mu                   sync.Mutex
	out                  io.Writer
	pod                  string
	writes, errors, seen int
}

func (w *writer) emit(e Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e.Time, e.Pod = time.Now().UTC(), w.pod
	b, _ := json.Marshal(e)
	_, _ = w.out.Write(append(b, '\n'))
}

func (w *writer) wrote(ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok {
		w.writes++
	} else {
		w.errors++
	}
}

func (w *writer) delivered() {
	w.mu.Lock()
	w.seen++
	w.mu.Unlock()
}

func (w *writer) summary() {
	w.mu.Lock()
	e := Event{Event: EventSummary, Writes: w.writes, Errors: w.errors, Seen: w.seen}
	w.mu.Unlock()
	w.emit(e)
}

func (w *writer) summaries(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.summary()
		}
	}
}
