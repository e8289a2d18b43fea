// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
)

// labClusterSpec reads a LabCluster's spec, its loadBalancer completed with the defaults.
func labClusterSpec(u *unstructured.Unstructured) (infra.LabClusterSpec, error) {
	var spec infra.LabClusterSpec
	if m, ok := u.Object["spec"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &spec); err != nil {
			return spec, fmt.Errorf("LabCluster %s spec: %w", key(u), err)
		}
	}
	if err := spec.LoadBalancer.Complete(); err != nil {
		return spec, fmt.Errorf("LabCluster %s: %w", key(u), err)
	}
	return spec, nil
}

// endpointOf is the APIEndpoint of a listener's address.
func endpointOf(addr string) (infra.APIEndpoint, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return infra.APIEndpoint{}, fmt.Errorf("balancer address %q: %w", addr, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return infra.APIEndpoint{}, fmt.Errorf("balancer address %q: port: %w", addr, err)
	}
	return infra.APIEndpoint{Host: host, Port: int32(p)}, nil
}

// reconcileCluster is one pass over LabCluster namespace/name: finalizer, balancer, endpoint,
// ready; on deletion, close the balancer and drop the finalizer.
func (c *Controller) reconcileCluster(ctx context.Context, namespace, name string) (time.Duration, error) {
	r := c.o.Client.Resource(infra.LabClusters).Namespace(namespace)
	k := namespace + "/" + name
	ev := func(step infra.Step, detail string) {
		c.record(k, Event{Namespace: namespace, Cluster: name, Step: step, Detail: detail})
	}
	u, err := r.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		closed, err := c.dropBalancer(ctx, namespace, name)
		if closed {
			ev(CloseBalancer, "the LabCluster is gone")
		}
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("get LabCluster %s: %w", k, err)
	}
	if u.GetDeletionTimestamp() != nil {
		closed, err := c.dropBalancer(ctx, namespace, name)
		if err != nil {
			return 0, err
		}
		if closed {
			ev(CloseBalancer, "")
		}
		if setFinalizer(u, ClusterFinalizer, false) {
			if _, err := r.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
				return 0, fmt.Errorf("remove the finalizer of LabCluster %s: %w", k, err)
			}
			ev(infra.RemoveFinalizer, "")
		}
		return 0, nil
	}
	if setFinalizer(u, ClusterFinalizer, true) {
		if u, err = r.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			return 0, fmt.Errorf("add the finalizer to LabCluster %s: %w", k, err)
		}
		ev(AddFinalizer, "")
	}
	spec, err := labClusterSpec(u)
	if err != nil {
		return 0, err
	}
	addr, created, err := c.o.Cloud.EnsureBalancer(ctx, namespace, name, spec)
	if err != nil {
		return 0, fmt.Errorf("make the balancer of LabCluster %s: %w", k, err)
	}
	if created {
		ev(CreateBalancer, fmt.Sprintf("%s, check %s every %s, out after %d", addr, spec.LoadBalancer.HealthCheck,
			spec.LoadBalancer.Interval(), spec.LoadBalancer.UnhealthyThreshold))
	}
	if spec.ControlPlaneEndpoint.Host == "" || spec.ControlPlaneEndpoint.Port == 0 {
		ep, err := endpointOf(addr)
		if err != nil {
			return 0, err
		}
		if err := unstructured.SetNestedMap(u.Object, map[string]any{"host": ep.Host, "port": int64(ep.Port)}, "spec", "controlPlaneEndpoint"); err != nil {
			return 0, fmt.Errorf("LabCluster %s: set the endpoint: %w", k, err)
		}
		if u, err = r.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			return 0, fmt.Errorf("set the endpoint of LabCluster %s: %w", k, err)
		}
		ev(SetEndpoint, net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))))
	}
	// status.ready is the v1beta1 contract's (Cluster API v1.8), status.initialization.provisioned
	// the v1beta2 contract's (v1.11 on); the provider serves both.
	ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
	provisioned, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "provisioned")
	if !ready || !provisioned {
		if err := unstructured.SetNestedField(u.Object, true, "status", "ready"); err != nil {
			return 0, fmt.Errorf("LabCluster %s: set ready: %w", k, err)
		}
		if err := unstructured.SetNestedField(u.Object, true, "status", "initialization", "provisioned"); err != nil {
			return 0, fmt.Errorf("LabCluster %s: set provisioned: %w", k, err)
		}
		if _, err := r.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
			return 0, fmt.Errorf("set LabCluster %s ready: %w", k, err)
		}
		ev(ClusterReady, "")
	}
	return 0, nil
}

// dropBalancer closes LabCluster namespace/name's balancer; it reports whether there was one.
func (c *Controller) dropBalancer(ctx context.Context, namespace, name string) (bool, error) {
	closed, err := c.o.Cloud.DeleteBalancer(ctx, namespace, name)
	if err != nil {
		return false, fmt.Errorf("close the balancer of LabCluster %s/%s: %w", namespace, name, err)
	}
	return closed, nil
}
