// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package steps is the evidence of the cloud lab's scenarios, step by step: what was done and
// what the real components did while it ran. It is its own package, apart from cloudlab (which
// links govmomi's vCenter simulator, 25 MB), so that the credwatch binary can read and print it.
package steps

import (
	"strings"
)

// Evidence is what the real components did in each step of cloud-password-rotated.
type Evidence struct {
	Scenario string `json:"scenario"`
	Era      string `json:"era"`
	Steps    []Step `json:"steps"`
}

// Step is one step: what was done and what was seen while it ran.
type Step struct {
	Name   string `json:"name"`
	Action string `json:"action"`
	// GetDelete is "ok" when a get and a delete through the API worked, else the error.
	GetDelete string `json:"getDelete,omitempty"`
	// Sessions is what ending the account's sessions ended.
	Sessions    string      `json:"sessions,omitempty"`
	Deployments []Workload  `json:"deployments,omitempty"`
	Nodes       []NodeState `json:"nodes"`
	// Events are the Events recorded during the step (all namespaces): "Reason: message" counted.
	Events []Count `json:"events"`
	// Logins are the service account's login attempts at vCenter or Keystone during the step.
	LoginsAccepted int `json:"loginsAccepted"`
	LoginsRejected int `json:"loginsRejected"`
	// Messages are the cloud lines each component logged during the step, counted.
	Messages map[string][]Count `json:"messages,omitempty"`
	// Restarted is what a restart in this step did: component -> "running" | "exited: <err>".
	Restarted map[string]string `json:"restarted,omitempty"`
	// Restarts are how many times each kubelet's service (systemd's Restart=always) started it
	// again during the step, by "kubelet/<node>"; kubelets it did not restart are left out.
	Restarts map[string]int `json:"restarts,omitempty"`
	// Findings are credwatch check's findings (warning or above) on the lab as the step left it,
	// "<id> <member or object>", when the run asked for them.
	Findings []string `json:"findings,omitempty"`
	// Cloud is what credwatch cloud --config says of the era's host files as the step left it:
	// its findings (warning or above), "<id> <object>", then each consumer it names stale or
	// crash-looping, "consumer <component> on <node> (...) of <source>".
	Cloud []string `json:"cloud,omitempty"`
}

// Workload is a Deployment's Pods by phase ("none" when it has none).
type Workload struct {
	Name string         `json:"name"`
	Pods map[string]int `json:"pods"`
}

// NodeState is a Node as the API shows it.
type NodeState struct {
	Name          string `json:"name"`
	Ready         bool   `json:"ready"`
	ProviderID    string `json:"providerID,omitempty"`
	Uninitialized bool   `json:"uninitialized"`
	// Region and Zone are its topology.kubernetes.io labels (set by an in-tree provider with
	// zones, or a cloud controller manager).
	Region string `json:"region,omitempty"`
	Zone   string `json:"zone,omitempty"`
}

// Count is a message and how often it was seen.
type Count struct {
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// Step returns the step named name.
func (e *Evidence) Step(name string) (Step, bool) {
	for _, s := range e.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return Step{}, false
}

// Has reports whether component logged a message containing sub in the step.
func (s Step) Has(component, sub string) bool {
	for _, c := range s.Messages[component] {
		if strings.Contains(c.Message, sub) {
			return true
		}
	}
	return false
}

// Node returns the node named name.
func (s Step) Node(name string) (NodeState, bool) {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return NodeState{}, false
}

// Workload returns the Deployment named name.
func (s Step) Workload(name string) (Workload, bool) {
	for _, w := range s.Deployments {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}
