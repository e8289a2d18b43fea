// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
)

// machinePass is one reconcile pass of a LabMachine.
type machinePass struct {
	c         *Controller
	r         dynamic.ResourceInterface
	lm        *unstructured.Unstructured
	key, host string
	machine   *unstructured.Unstructured // the owner Machine, nil if not found
	cluster   *unstructured.Unstructured // its Cluster, nil if not found
	labClus   string                     // the LabCluster's name, "" if not known
	dereg     infra.Deregistration
	info      HostInfo // the host, as the cloud said at the start of the pass or made it
}

func (p *machinePass) ev(step infra.Step, detail string) {
	p.c.record(p.key, Event{Namespace: p.lm.GetNamespace(), Cluster: p.labClus, Machine: p.lm.GetName(), Step: step, Detail: detail})
}

// get reads namespace/name of gvr; found is false when name is "" or there is no such object.
func (c *Controller) get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (u *unstructured.Unstructured, found bool, err error) {
	if name == "" {
		return nil, false, nil
	}
	u, err = c.o.Client.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("get %s %s/%s: %w", gvr.Resource, namespace, name, err)
	}
	return u, true, nil
}

// reconcileMachine is one pass over LabMachine namespace/name: it finds the owner Machine,
// its Cluster and LabCluster, computes the MachineState and runs infra.Plan's steps.
func (c *Controller) reconcileMachine(ctx context.Context, namespace, name string) (time.Duration, error) {
	r := c.o.Client.Resource(infra.LabMachines).Namespace(namespace)
	lm, found, err := c.get(ctx, infra.LabMachines, namespace, name)
	if err != nil || !found {
		return 0, err // gone: its finalizer was removed after its host was deleted
	}
	p := &machinePass{c: c, r: r, lm: lm, key: namespace + "/" + name, host: HostName(name)}
	if p.info, err = c.o.Cloud.Host(ctx, p.host); err != nil {
		return 0, fmt.Errorf("LabMachine %s: describe host %s: %w", p.key, p.host, err)
	}
	deleting := lm.GetDeletionTimestamp() != nil
	switch {
	case deleting && !hasMachineFinalizer(lm):
		return 0, nil
	case !deleting && setFinalizer(lm, MachineFinalizer, true):
		if p.lm, err = r.Update(ctx, lm, metav1.UpdateOptions{}); err != nil {
			return 0, fmt.Errorf("add the finalizer to LabMachine %s: %w", p.key, err)
		}
		p.ev(AddFinalizer, "")
	}
	if err := p.load(ctx); err != nil {
		return 0, err
	}
	if p.machine == nil && !deleting {
		p.ev(WaitMachine, "no owner Machine yet")
		return 0, nil // the owner reference comes as an update of the LabMachine
	}
	s := machineState(p.lm, p.machine, p.cluster, hostFacts{Up: p.info.Up, Bootstrapped: p.info.Bootstrapped, InLB: p.info.Balancer != ""})
	for _, step := range infra.Plan(s, p.dereg) {
		if err := p.run(ctx, step, s); err != nil {
			return 0, err
		}
		if step == infra.WaitCluster || step == infra.WaitBootstrap {
			return c.o.Poll, nil
		}
	}
	if deleting {
		return 0, nil
	}
	if p.info.Up {
		if err := p.markReady(ctx); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// load finds the owner Machine, the LabCluster (through the Cluster's infrastructureRef, or
// the one the host was registered with) and its deregistration policy.
func (p *machinePass) load(ctx context.Context) error {
	ns := p.lm.GetNamespace()
	var err error
	if p.machine, _, err = p.c.get(ctx, Machines, ns, ownerMachine(p.lm)); err != nil {
		return err
	}
	if p.cluster, _, err = p.c.get(ctx, Clusters, ns, clusterName(p.machine, p.lm)); err != nil {
		return err
	}
	if p.cluster != nil {
		p.labClus = infraRefName(p.cluster)
	}
	if p.labClus == "" {
		_, p.labClus = splitKey(p.info.Balancer)
	}
	bal := infra.LoadBalancer{}
	lc, found, err := p.c.get(ctx, infra.LabClusters, ns, p.labClus)
	if err != nil {
		return err
	}
	if found {
		spec, err := labClusterSpec(lc)
		if err != nil {
			return err
		}
		bal = spec.LoadBalancer
	} else if err := bal.Complete(); err != nil {
		return err
	}
	p.dereg = bal.Deregistration
	return nil
}

// run takes one of Plan's steps.
func (p *machinePass) run(ctx context.Context, step infra.Step, s infra.MachineState) error {
	c := p.c
	switch step {
	case infra.WaitCluster:
		p.ev(step, "Cluster.status.infrastructureReady is not true")
	case infra.WaitBootstrap:
		p.ev(step, "Machine.spec.bootstrap.dataSecretName is not set")
	case infra.CreateHost:
		return p.createHost(ctx)
	case infra.Register:
		if p.labClus == "" {
			return fmt.Errorf("register LabMachine %s: its Cluster names no LabCluster", p.key)
		}
		if !p.info.Up {
			return fmt.Errorf("register LabMachine %s: host %s does not run", p.key, p.host)
		}
		addr := net.JoinHostPort(p.info.IP.String(), strconv.Itoa(APIServerPort))
		// Out of rotation until its first check passes, as a cloud balancer's new member.
		if err := c.o.Cloud.Register(ctx, p.lm.GetNamespace(), p.labClus, p.host, addr); err != nil {
			return fmt.Errorf("register LabMachine %s: %w", p.key, err)
		}
		p.ev(step, addr)
	case infra.Deregister:
		if err := c.o.Cloud.Deregister(ctx, p.host); err != nil {
			return fmt.Errorf("deregister LabMachine %s: %w", p.key, err)
		}
		why := "the LabMachine is being deleted"
		if !s.Deleting {
			why = "the Machine is being deleted (drain)"
		}
		p.ev(step, fmt.Sprintf("%s; deregistration %s", why, p.dereg))
	case infra.DeleteHost:
		if err := c.o.Cloud.DeleteHost(ctx, p.host); err != nil {
			return fmt.Errorf("delete host %s of LabMachine %s: %w", p.host, p.key, err)
		}
		p.ev(step, p.host)
	case infra.RemoveFinalizer:
		setFinalizer(p.lm, MachineFinalizer, false)
		if _, err := p.r.Update(ctx, p.lm, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("remove the finalizer of LabMachine %s: %w", p.key, err)
		}
		c.mu.Lock()
		delete(c.last, p.key)
		c.mu.Unlock()
		p.ev(step, "")
	default:
		return fmt.Errorf("LabMachine %s: unknown step %q", p.key, step)
	}
	return nil
}

// createHost reads the bootstrap data and brings up the host.
func (p *machinePass) createHost(ctx context.Context) error {
	secretName, _, _ := unstructured.NestedString(p.machine.Object, "spec", "bootstrap", "dataSecretName")
	secret, found, err := p.c.get(ctx, Secrets, p.lm.GetNamespace(), secretName)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("LabMachine %s: bootstrap secret %s not found", p.key, secretName)
	}
	data, err := bootstrapData(secret)
	if err != nil {
		return fmt.Errorf("LabMachine %s: %w", p.key, err)
	}
	meta := map[string]string{"local_hostname": p.host, "instance_id": string(p.lm.GetUID())}
	h, err := p.c.o.Cloud.CreateHost(ctx, p.host, data, meta)
	if err != nil {
		return fmt.Errorf("create host %s of LabMachine %s: %w", p.host, p.key, err)
	}
	p.info = h
	p.ev(infra.CreateHost, fmt.Sprintf("%s at %s", p.host, h.IP))
	return nil
}

// markReady sets spec.providerID, status.addresses, status.ready and
// status.initialization.provisioned from the host (p.info), where they differ.
func (p *machinePass) markReady(ctx context.Context) error {
	h := p.info
	id := infra.ProviderID(h.Name)
	addrs := []any{
		map[string]any{"type": "InternalIP", "address": h.IP.String()},
		map[string]any{"type": "Hostname", "address": h.Name},
	}
	var err error
	changed := false
	if got, _, _ := unstructured.NestedString(p.lm.Object, "spec", "providerID"); got != id {
		if err := unstructured.SetNestedField(p.lm.Object, id, "spec", "providerID"); err != nil {
			return fmt.Errorf("LabMachine %s: set providerID: %w", p.key, err)
		}
		if p.lm, err = p.r.Update(ctx, p.lm, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("set the providerID of LabMachine %s: %w", p.key, err)
		}
		changed = true
	}
	// status.ready for the v1beta1 contract, status.initialization.provisioned for v1beta2.
	ready, _, _ := unstructured.NestedBool(p.lm.Object, "status", "ready")
	provisioned, _, _ := unstructured.NestedBool(p.lm.Object, "status", "initialization", "provisioned")
	got, _, _ := unstructured.NestedSlice(p.lm.Object, "status", "addresses")
	if !ready || !provisioned || !reflect.DeepEqual(got, addrs) {
		status, _, _ := unstructured.NestedMap(p.lm.Object, "status")
		if status == nil {
			status = map[string]any{}
		}
		status["ready"], status["addresses"] = true, addrs
		status["initialization"] = map[string]any{"provisioned": true}
		p.lm.Object["status"] = status
		if p.lm, err = p.r.UpdateStatus(ctx, p.lm, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("set LabMachine %s ready: %w", p.key, err)
		}
		changed = true
	}
	if changed {
		p.ev(MachineReady, fmt.Sprintf("%s, %s", id, h.IP))
	}
	return nil
}
