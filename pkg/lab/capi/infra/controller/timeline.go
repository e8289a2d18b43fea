// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
)

// Steps of the LabCluster reconciler, and of the LabMachine reconciler besides infra.Plan's.
const (
	AddFinalizer   infra.Step = "add-finalizer"   // the object's finalizer is added
	CreateBalancer infra.Step = "create-balancer" // the LabCluster's balancer listens
	SetEndpoint    infra.Step = "set-endpoint"    // spec.controlPlaneEndpoint is the balancer's address
	ClusterReady   infra.Step = "cluster-ready"   // the LabCluster's status.ready is true
	CloseBalancer  infra.Step = "close-balancer"  // the LabCluster is deleted: its balancer is closed
	WaitMachine    infra.Step = "wait-machine"    // the LabMachine has no owner Machine yet
	MachineReady   infra.Step = "machine-ready"   // providerID, addresses and status.ready are set
)

// Event is one step the controller took.
type Event struct {
	Time time.Time
	// Namespace and Cluster are the LabCluster's (for a LabMachine: its Cluster's LabCluster,
	// when known); Machine is the LabMachine's name, empty for LabCluster steps.
	Namespace, Cluster, Machine string
	Step                        infra.Step
	Detail                      string
}

// String is the event as a progress line.
func (e Event) String() string {
	obj := "labcluster " + e.Namespace + "/" + e.Cluster
	if e.Machine != "" {
		obj = "labmachine " + e.Namespace + "/" + e.Machine
		if e.Cluster != "" {
			obj += " of " + e.Cluster
		}
	}
	s := fmt.Sprintf("%s %s: %s", e.Time.Format("15:04:05.000"), obj, e.Step)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// timeline keeps every event and writes each as a progress line, or gives it to steps when
// set; safe for concurrent use.
type timeline struct {
	mu     sync.Mutex
	events []Event
	log    io.Writer
	steps  func(Event)
	now    func() time.Time
}

// add stamps e with the time, keeps it and logs it.
func (t *timeline) add(e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.Time = t.now()
	t.events = append(t.events, e)
	if t.steps != nil {
		t.steps(e)
		return
	}
	_, _ = fmt.Fprintln(t.log, e.String())
}

// list returns a copy of the events so far, oldest first.
func (t *timeline) list() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Event(nil), t.events...)
}
