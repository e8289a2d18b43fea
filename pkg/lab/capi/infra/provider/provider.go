// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package provider runs the lab infrastructure provider's controller (capi/infra/controller) as
// a Pod does, in the cluster it manages (issue 40: a management cluster that manages itself,
// after clusterctl move): against the lab's cloud API (package capi/infra/cloud), with leader
// election on a Lease in its namespace, and, like a controller-runtime manager, it exits when
// it loses the Lease so that the kubelet restarts it. It writes one JSON line per event
// (platform.Event: started, leading, lost-lease, "log" for each of the controller's progress
// lines, and "step" for each step it takes, with the step: ParseStep); client-go's own words (leader election's "failed to renew lease") go to
// stderr through klog. hack/labimages/provider is the program.
package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
	"github.com/credwatch/credwatch/pkg/lab/platform"
)

// LeaseName is the provider's leader-election Lease.
const LeaseName = "capi-lab-provider-leader-election"

// stopWait bounds the wait for the controller's workers once the provider stops leading.
const stopWait = 30 * time.Second

// Config is one provider process.
type Config struct {
	// Pod is the identity in the Lease and on every line (the Pod's name); required.
	Pod string
	// LeaseNamespace holds the Lease (the Pod's namespace); required.
	LeaseNamespace string
	// Namespace limits the controller to the LabClusters and LabMachines of one namespace; ""
	// watches all.
	Namespace string
	// LeaseDuration, RenewDeadline and RetryPeriod are leader election's; defaults those of
	// controller-runtime (15 s, 10 s, 2 s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

func (c *Config) complete() error {
	if c.Pod == "" || c.LeaseNamespace == "" {
		return errors.New("lab provider: a pod name and the Lease's namespace are required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.LeaseDuration, 15*time.Second)
	def(&c.RenewDeadline, 10*time.Second)
	def(&c.RetryPeriod, 2*time.Second)
	return nil
}

// Clients reach the cluster the provider runs in.
type Clients struct {
	Dynamic dynamic.Interface    // the controller's
	Kube    kubernetes.Interface // leader election's
}

// Run runs the controller with cloud while it holds the Lease, until ctx ends (nil) or it
// loses the Lease (platform.ErrLostLease).
func Run(ctx context.Context, c Config, cl Clients, cloud controller.Cloud, out io.Writer) error {
	if err := c.complete(); err != nil {
		return err
	}
	lines := newLines(out, c.Pod)
	lines.emit(platform.Event{Event: platform.EventStarted})
	ctrl, err := controller.New(controller.Options{Client: cl.Dynamic, Cloud: cloud, Namespace: c.Namespace, Log: lines, Steps: lines.step})
	if err != nil {
		return fmt.Errorf("lab provider: %w", err)
	}
	var runErr error
	leading := make(chan struct{}) // closed when it starts leading
	ran := make(chan struct{})     // closed when the controller's Run returned
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: c.LeaseNamespace},
			Client:     cl.Kube.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: c.Pod},
		},
		LeaseDuration: c.LeaseDuration, RenewDeadline: c.RenewDeadline, RetryPeriod: c.RetryPeriod,
		ReleaseOnCancel: true, Name: LeaseName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				close(leading)
				lines.emit(platform.Event{Event: platform.EventLeading})
				defer close(ran)
				runErr = ctrl.Run(lctx) // returns once its workers stopped
			},
			OnStoppedLeading: func() {}, // Run's return says it
		},
	})
	if err != nil {
		return fmt.Errorf("lab provider: leader election: %w", err)
	}
	// le.Run returns when ctx ends or, once it led, when the Lease is lost; either ends
	// OnStartedLeading's context.
	le.Run(ctx)
	if ctx.Err() == nil || closed(leading) {
		// It led: wait for the controller's workers (their cloud calls end with them).
		select {
		case <-ran:
			if runErr != nil {
				return fmt.Errorf("lab provider: %w", runErr)
			}
		case <-time.After(stopWait):
			lines.emit(platform.Event{Event: EventLog, Message: "the controller did not stop within " + stopWait.String()})
		}
	}
	if ctx.Err() == nil {
		lines.emit(platform.Event{Event: platform.EventLost, Message: platform.ErrLostLease.Error()})
		return platform.ErrLostLease
	}
	return nil
}

// closed reports whether ch is closed.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
