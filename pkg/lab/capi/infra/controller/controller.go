// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
)

// Options configures a Controller.
type Options struct {
	// Client reaches the management cluster (required).
	Client dynamic.Interface
	// Cloud makes the hosts and the balancers. Default: a LocalCloud of Hosts, Listen, Address
	// and CheckTLS, which Run closes when it ends (unless Handover).
	Cloud Cloud
	// Hosts makes the LabMachines' hosts of the default Cloud (required without Cloud).
	Hosts Hosts
	// Namespace limits the controller to one namespace; "" watches all.
	Namespace string
	// Listen, Address and CheckTLS configure the default Cloud's balancers (LocalOptions).
	Listen   func(namespace, name string, endpoint infra.APIEndpoint) (net.Listener, error)
	Address  string
	CheckTLS *tls.Config
	// Poll is how often a pass that waits (for the Cluster, the bootstrap data, the host's
	// bootstrap) is repeated; default one second.
	Poll time.Duration
	// Backoff bounds the retries of a failed pass: the first after Backoff, doubling up to
	// 30 s. Default 250 ms.
	Backoff time.Duration
	// Log receives progress lines; default io.Discard.
	Log io.Writer
	// Steps, when set, receives every step as it is taken instead of Log (the provider's Pod
	// writes them as JSON lines the lab reads back); Events has them all the same.
	Steps func(Event)
	// Now is the timeline's clock; default time.Now.
	Now func() time.Time
}

// Controller runs the LabCluster and LabMachine reconcilers. Its methods are safe for
// concurrent use.
type Controller struct {
	o        Options
	timeline timeline

	own *LocalCloud // the default Cloud, which Run closes; nil when Options.Cloud is given

	mu   sync.Mutex
	last map[string]infra.Step // object key → the last step recorded (waits once)
	keep bool                  // Run leaves the balancers open when it ends (Handover)
	next dynamic.Interface     // the client of the next Run (Handover)
}

// New checks o and returns a Controller; Run starts it.
func New(o Options) (*Controller, error) {
	if o.Client == nil || (o.Cloud == nil && o.Hosts == nil) {
		return nil, errors.New("lab infrastructure controller: a client and a Cloud or Hosts are required")
	}
	var own *LocalCloud
	if o.Cloud == nil {
		var err error
		if own, err = NewLocal(LocalOptions{Hosts: o.Hosts, Listen: o.Listen, Address: o.Address, CheckTLS: o.CheckTLS}); err != nil {
			return nil, fmt.Errorf("lab infrastructure controller: %w", err)
		}
		o.Cloud = own
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Backoff <= 0 {
		o.Backoff = 250 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Controller{o: o, timeline: timeline{log: o.Log, steps: o.Steps, now: o.Now}, own: own, last: map[string]infra.Step{}}, nil
}

// Events returns every step taken so far, oldest first.
func (c *Controller) Events() []Event { return c.timeline.list() }

// Balancer returns LabCluster namespace/name's balancer, nil if it has none or the Cloud is
// not this process's (a LocalCloud).
func (c *Controller) Balancer(namespace, name string) *lb.LoadBalancer {
	if l, ok := c.o.Cloud.(*LocalCloud); ok {
		return l.Balancer(namespace, name)
	}
	return nil
}

// record adds a step to the timeline; a wait is recorded only when the object's last step
// was another.
func (c *Controller) record(objKey string, e Event) {
	c.mu.Lock()
	repeat := c.last[objKey] == e.Step
	c.last[objKey] = e.Step
	c.mu.Unlock()
	if repeat && isWait(e.Step) {
		return
	}
	c.timeline.add(e)
}

func isWait(s infra.Step) bool {
	return s == infra.WaitCluster || s == infra.WaitBootstrap || s == WaitMachine
}

// logf writes a progress line that is not a step.
func (c *Controller) logf(format string, args ...any) {
	c.timeline.mu.Lock()
	defer c.timeline.mu.Unlock()
	_, _ = fmt.Fprintf(c.o.Log, "%s "+format+"\n", append([]any{c.o.Now().Format("15:04:05.000")}, args...)...)
}

// machineWorkers is how many LabMachines are reconciled at once.
const machineWorkers = 4

// reconciler is one kind's pass: it returns how soon to look again (0: on the next event).
type reconciler func(ctx context.Context, namespace, name string) (time.Duration, error)

// Run runs both reconcilers until ctx ends, then closes the default Cloud's balancers (a Cloud
// given in Options is its maker's to close). A pass that fails is logged and retried with
// back-off; it never stops the other objects.
func (c *Controller) Run(ctx context.Context) error {
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.o.Client, 10*time.Minute, c.o.Namespace, nil)
	clusters := c.newQueue("labclusters")
	machines := c.newQueue("labmachines")
	labMachines := factory.ForResource(infra.LabMachines).Informer()
	handlers := []struct {
		gvr     schema.GroupVersionResource
		enqueue func(*unstructured.Unstructured)
	}{
		{infra.LabClusters, func(u *unstructured.Unstructured) { clusters.Add(key(u)) }},
		{infra.LabMachines, func(u *unstructured.Unstructured) { machines.Add(key(u)) }},
		{Machines, func(u *unstructured.Unstructured) {
			// A Machine's deletion (drain) matters to its LabMachine.
			ref, _, _ := unstructured.NestedStringMap(u.Object, "spec", "infrastructureRef")
			if ref["kind"] == "LabMachine" && ref["name"] != "" {
				machines.Add(u.GetNamespace() + "/" + ref["name"])
			}
		}},
		{Clusters, func(u *unstructured.Unstructured) {
			// infrastructureReady releases the Cluster's LabMachines.
			for _, o := range labMachines.GetStore().List() {
				if lm, ok := o.(*unstructured.Unstructured); ok && lm.GetNamespace() == u.GetNamespace() &&
					lm.GetLabels()[ClusterNameLabel] == u.GetName() {
					machines.Add(key(lm))
				}
			}
		}},
	}
	for _, h := range handlers {
		if _, err := factory.ForResource(h.gvr).Informer().AddEventHandler(eventHandler(h.enqueue)); err != nil {
			return fmt.Errorf("watch %s: %w", h.gvr.Resource, err)
		}
	}
	factory.Start(ctx.Done())
	c.logf("lab infrastructure controller: watching LabClusters and LabMachines in %s", nsName(c.o.Namespace))

	// One LabCluster worker (its passes are quick); machineWorkers LabMachine workers, so that
	// one slow Hosts.Create does not hold up the other machines. A queue hands a key to one
	// worker at a time.
	var wg sync.WaitGroup
	for _, w := range []struct {
		q   workqueue.TypedRateLimitingInterface[string]
		rec reconciler
		n   int
	}{{clusters, c.reconcileCluster, 1}, {machines, c.reconcileMachine, machineWorkers}} {
		for range w.n {
			wg.Add(1)
			go func() { defer wg.Done(); c.work(ctx, w.q, w.rec) }()
		}
	}
	<-ctx.Done()
	clusters.ShutDown()
	machines.ShutDown()
	wg.Wait()
	factory.Shutdown()
	c.mu.Lock()
	keep := c.keep
	c.keep = false
	if c.next != nil { // no pass runs now: the workers have returned
		c.o.Client, c.next = c.next, nil
	}
	c.mu.Unlock()
	if keep {
		c.logf("lab infrastructure controller: stopped, its balancers and hosts kept for the next Run")
		return nil
	}
	if c.own != nil {
		c.own.Close() // the controller that made them stops
	}
	c.logf("lab infrastructure controller: stopped")
	return nil
}

// Handover makes the Run in progress leave the balancers, the hosts and their registrations as
// they are when its context ends, so that the next Run, on the cluster client (the cluster the
// objects were moved to, as clusterctl move moves them), goes on from them: a cloud's load
// balancers and instances do not stop while their provider's controller moves. client nil keeps
// the current one. Call it before ending the Run's context; start the next Run after it
// returned.
func (c *Controller) Handover(client dynamic.Interface) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keep = true
	c.next = client
}

func nsName(ns string) string {
	if ns == "" {
		return "every namespace"
	}
	return "namespace " + ns
}

func (c *Controller) newQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](c.o.Backoff, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name})
}

// eventHandler calls enqueue with the object of every add, update and delete.
func eventHandler(enqueue func(*unstructured.Unstructured)) cache.ResourceEventHandler {
	one := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			enqueue(u)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: one, UpdateFunc: func(_, n any) { one(n) }, DeleteFunc: one}
}

// work runs rec on q's keys, one at a time, until q shuts down.
func (c *Controller) work(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], rec reconciler) {
	for {
		k, quit := q.Get()
		if quit {
			return
		}
		ns, name := splitKey(k)
		after, err := rec(ctx, ns, name)
		switch {
		case err != nil && ctx.Err() == nil:
			c.logf("%s: attempt %d failed, retried with back-off: %v", k, q.NumRequeues(k)+1, err)
			q.AddRateLimited(k)
		case after > 0:
			q.Forget(k)
			q.AddAfter(k, after)
		default:
			q.Forget(k)
		}
		q.Done(k)
	}
}
