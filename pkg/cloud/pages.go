// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// pageSize bounds one list response: a page of 500 pods or nodes is a few MB, far below the
// response bound every client has (limits.Response); a cluster of 5000 nodes in one response
// would not be.
const pageSize = 500

// pages lists page by page, each page within timeout, and returns every item.
func pages[T any](ctx context.Context, timeout time.Duration, opts metav1.ListOptions,
	list func(context.Context, metav1.ListOptions) ([]T, string, error)) ([]T, error) {
	var all []T
	opts.Limit = pageSize
	for {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		items, next, err := list(cctx, opts)
		cancel()
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		opts.Continue = next
	}
}

func listPods(ctx context.Context, cs kubernetes.Interface, ns string, timeout time.Duration, opts metav1.ListOptions) ([]corev1.Pod, error) {
	return pages(ctx, timeout, opts, func(ctx context.Context, o metav1.ListOptions) ([]corev1.Pod, string, error) {
		l, err := cs.CoreV1().Pods(ns).List(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
}

func listNodes(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) ([]corev1.Node, error) {
	return pages(ctx, timeout, metav1.ListOptions{}, func(ctx context.Context, o metav1.ListOptions) ([]corev1.Node, string, error) {
		l, err := cs.CoreV1().Nodes().List(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
}
