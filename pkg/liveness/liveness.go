// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package liveness says whether a control-plane controller is alive from its leader-election
// Lease in kube-system: a holder that has not renewed within the lease duration (plus a small
// grace for clock differences) is not running, whatever its Pod status says.
package liveness

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Namespace holds the controllers' leader-election leases.
const Namespace = "kube-system"

// Grace is added to a lease's duration before it counts as stale.
const Grace = 5 * time.Second

// TaintUninitialized is the cloud provider's node taint (k8s.io/cloud-provider/api/well_known_taints.go):
// a node keeps it until the cloud controller manager initializes it.
const TaintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"

// Controller is a control-plane controller whose leader-election lease kube-system/Lease says
// whether it runs.
type Controller struct {
	Lease string
	// Stops is what stops happening while it does not run.
	Stops string
	// Cloud: it runs cloud-provider loops, so a rejected cloud credential can stop it.
	Cloud bool
}

// Controllers is the one list of controller leases credwatch reads (check's controllers check
// reads every one; cloud reads those with Cloud set).
var Controllers = []Controller{
	{Lease: "kube-controller-manager", Cloud: true,
		Stops: "Deployments exist, ReplicaSets will not create Pods, and no Events will say why"},
	{Lease: "kube-scheduler",
		Stops: "new Pods stay Pending without a node and without scheduling Events"},
	{Lease: "cloud-controller-manager", Cloud: true,
		Stops: "new Nodes keep the " + TaintUninitialized + " taint, Pods that do not tolerate it stay Pending and LoadBalancer Services get no address"},
}

// Stops is what stops while the controller holding lease does not run ("" for a lease not in
// Controllers).
func Stops(lease string) string {
	for _, c := range Controllers {
		if c.Lease == lease {
			return c.Stops
		}
	}
	return ""
}

// Status is one lease's liveness at a moment.
type Status struct {
	Name      string        `json:"name"`
	Found     bool          `json:"found"`
	Holder    string        `json:"holder,omitempty"`
	RenewTime time.Time     `json:"renewTime,omitzero"`
	Duration  time.Duration `json:"duration,omitempty"`
	// Age is how long ago the lease was renewed.
	Age time.Duration `json:"age,omitempty"`
	// Stale: renewed longer ago than its duration plus Grace (or never renewed).
	Stale bool `json:"stale"`
	// Transitions is the lease's leaseTransitions: how often another instance took it over (a
	// restarted controller is another instance); Acquired is when the holder took it.
	Transitions int       `json:"transitions,omitempty"`
	Acquired    time.Time `json:"acquired,omitzero"`
}

// RecentTakeover is how long after a takeover of its lease a controller counts as restarted.
const RecentTakeover = 10 * time.Minute

// TookOverRecently reports whether the lease changed hands (Transitions > 0) within
// RecentTakeover before now: the controller restarted, or another instance took over.
func (s Status) TookOverRecently(now time.Time) bool {
	return s.Found && s.Transitions > 0 && !s.Acquired.IsZero() && now.Sub(s.Acquired) < RecentTakeover
}

// LeaseStatus reads kube-system/name and judges it at now. A missing lease is Found=false and
// not stale (the controller may not use leader election, or may not be deployed).
func LeaseStatus(ctx context.Context, client kubernetes.Interface, name string, now time.Time) (Status, error) {
	l, err := client.CoordinationV1().Leases(Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return Status{Name: name}, nil
	}
	if err != nil {
		return Status{Name: name}, fmt.Errorf("get lease %s/%s: %w", Namespace, name, err)
	}
	s := Status{Name: name, Found: true}
	if l.Spec.HolderIdentity != nil {
		s.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.LeaseDurationSeconds != nil {
		s.Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if l.Spec.LeaseTransitions != nil {
		s.Transitions = int(*l.Spec.LeaseTransitions)
	}
	if l.Spec.AcquireTime != nil {
		s.Acquired = l.Spec.AcquireTime.Time
	}
	switch {
	case l.Spec.RenewTime != nil:
		s.RenewTime = l.Spec.RenewTime.Time
	case l.Spec.AcquireTime != nil:
		s.RenewTime = l.Spec.AcquireTime.Time
	}
	return judge(s, now), nil
}

func judge(s Status, now time.Time) Status {
	if s.RenewTime.IsZero() {
		s.Stale = true
		return s
	}
	s.Age = now.Sub(s.RenewTime)
	s.Stale = s.Age > s.Duration+Grace
	return s
}
