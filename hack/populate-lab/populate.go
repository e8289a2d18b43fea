// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
)

const nsPrefix = "credwatch-pop-"

func ns(i, n int) string { return fmt.Sprintf("%s%d", nsPrefix, i%n) }

func populate(ctx context.Context, cs kubernetes.Interface, mc metadata.Interface, o options) error {
	start := time.Now()
	for i := range o.namespaces {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns(i, o.namespaces)}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace: %w", err)
		}
	}
	nodes, err := existing(ctx, mc, "nodes")
	if err != nil {
		return err
	}
	if err := parallel(o.jobs, o.nodes, "nodes", func(i int) error {
		if nodes[nodeName(i)] {
			return nil
		}
		n, err := cs.CoreV1().Nodes().Create(ctx, newNode(i), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		nodeStatus(n, i, time.Now())
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return err
	}
	// Service account i lives in namespace i % namespaces.
	sas, err := existing(ctx, mc, "serviceaccounts")
	if err != nil {
		return err
	}
	if err := parallel(o.jobs, o.sas, "serviceaccounts", func(i int) error {
		name := fmt.Sprintf("sa-%d", i)
		if sas[ns(i, o.namespaces)+"/"+name] {
			return nil
		}
		_, err := cs.CoreV1().ServiceAccounts(ns(i, o.namespaces)).Create(ctx,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	// Secret i belongs to service account i % sas (same namespace); every 10th is marked used,
	// every 50th marked invalid.
	secrets, err := existing(ctx, mc, "secrets")
	if err != nil {
		return err
	}
	if err := parallel(o.jobs, o.secrets, "legacy token secrets", func(i int) error {
		sa := i % o.sas
		name := fmt.Sprintf("legacy-token-%d", i)
		if secrets[ns(sa, o.namespaces)+"/"+name] {
			return nil
		}
		labels := map[string]string{}
		if i%10 == 0 {
			labels["kubernetes.io/legacy-token-last-used"] = time.Now().UTC().Format("2006-01-02")
		}
		if i%50 == 0 {
			labels["kubernetes.io/legacy-token-invalid-since"] = time.Now().UTC().Format("2006-01-02")
		}
		_, err := cs.CoreV1().Secrets(ns(sa, o.namespaces)).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels,
				Annotations: map[string]string{corev1.ServiceAccountNameKey: fmt.Sprintf("sa-%d", sa)}},
			Type: corev1.SecretTypeServiceAccountToken}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	pods, err := existing(ctx, mc, "pods")
	if err != nil {
		return err
	}
	if err := parallel(o.jobs, o.pods, "pods", func(i int) error {
		p := newPod(i, o)
		if pods[p.Namespace+"/"+p.Name] {
			return nil
		}
		p, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil || o.nodes == 0 {
			return err
		}
		podRunning(p, i%o.nodes, i, time.Now())
		_, err = cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "populated %d pods, %d nodes, %d service accounts, %d legacy token secrets in %s\n",
		o.pods, o.nodes, o.sas, o.secrets, time.Since(start).Round(time.Second))
	return nil
}

// newPod is pod i: it runs as service account i % sas; every 20th mounts a legacy token secret
// of its SA; every 7th adds a projected token for another audience. With nodes it is bound to
// node i % nodes.
func newPod(i int, o options) *corev1.Pod {
	sa := i % o.sas
	exp := int64(7200)
	spec := corev1.PodSpec{ServiceAccountName: fmt.Sprintf("sa-%d", sa),
		Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}
	if o.nodes > 0 {
		spec.NodeName = nodeName(i % o.nodes)
	}
	if i%20 == 0 && sa < o.secrets {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "legacy", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: fmt.Sprintf("legacy-token-%d", sa)}}})
	}
	if i%7 == 0 {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "vault", VolumeSource: corev1.VolumeSource{
			Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: "vault", ExpirationSeconds: &exp, Path: "token"}}}}}})
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: ns(sa, o.namespaces)}, Spec: spec}
}

// existing returns the names ("ns/name", or "name" for cluster-scoped resources) of the objects
// of resource the populated namespaces already hold, read from the watch cache.
func existing(ctx context.Context, mc metadata.Interface, resource string) (map[string]bool, error) {
	list, err := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: resource}).
		List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", resource, err)
	}
	out := make(map[string]bool, len(list.Items))
	for _, it := range list.Items {
		switch {
		case it.Namespace == "":
			out[it.Name] = true
		case strings.HasPrefix(it.Namespace, nsPrefix):
			out[it.Namespace+"/"+it.Name] = true
		}
	}
	return out, nil
}

// parallel runs fn(0..n-1) on jobs workers; AlreadyExists counts as done, so reruns are cheap.
func parallel(jobs, n int, what string, fn func(i int) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil && !apierrors.IsAlreadyExists(err) {
					once.Do(func() { firstErr = fmt.Errorf("create %s #%d: %w", what, i, err) })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
