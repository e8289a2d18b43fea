// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/credwatch/credwatch/pkg/liveness"
)

// Well-known names.
const (
	labelLastUsed     = "kubernetes.io/legacy-token-last-used"
	labelInvalidSince = "kubernetes.io/legacy-token-invalid-since"
	annotSAName       = "kubernetes.io/service-account.name"
	taintUninit       = liveness.TaintUninitialized
	pageSize          = 500
)

// listPods pages through all pods, keeping only what the checks need.
func listPods(ctx context.Context, c *Config, cs kubernetes.Interface) ([]Pod, error) {
	var out []Pod
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		ctx1, cancel := context.WithTimeout(ctx, c.Timeout)
		list, err := cs.CoreV1().Pods("").List(ctx1, opts)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("list pods: %w", err)
		}
		if out == nil {
			out = make([]Pod, 0, len(list.Items))
		}
		for i := range list.Items {
			out = append(out, compactPod(&list.Items[i]))
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

func compactPod(p *corev1.Pod) Pod {
	cp := Pod{Namespace: p.Namespace, Name: p.Name, ServiceAccount: p.Spec.ServiceAccountName,
		Node: p.Spec.NodeName, Phase: string(p.Status.Phase)}
	for _, v := range p.Spec.Volumes {
		switch {
		case v.Secret != nil:
			cp.SecretVolumes = append(cp.SecretVolumes, v.Secret.SecretName)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if t := s.ServiceAccountToken; t != nil {
					exp := int64(3600)
					if t.ExpirationSeconds != nil {
						exp = *t.ExpirationSeconds
					}
					cp.Projected = append(cp.Projected, ProjectedToken{Audience: t.Audience, ExpirationSeconds: exp})
				}
				if s.Secret != nil {
					cp.SecretVolumes = append(cp.SecretVolumes, s.Secret.Name)
				}
			}
		}
	}
	cp.ToleratesUninit = liveness.ToleratesUninitialized(p.Spec.Tolerations)
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
			cp.UnschedulableMsg = cond.Message
		}
	}
	return cp
}

// countServiceAccounts pages through service-account metadata.
func countServiceAccounts(ctx context.Context, c *Config, mc metadata.Interface) (int, error) {
	n := 0
	opts := metav1.ListOptions{Limit: pageSize}
	res := schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	for {
		ctx1, cancel := context.WithTimeout(ctx, c.Timeout)
		list, err := mc.Resource(res).List(ctx1, opts)
		cancel()
		if err != nil {
			return 0, fmt.Errorf("list serviceaccounts: %w", err)
		}
		n += len(list.Items)
		if list.Continue == "" {
			return n, nil
		}
		opts.Continue = list.Continue
	}
}

// listLegacySecrets pages through the metadata (never the data) of service-account token Secrets.
func listLegacySecrets(ctx context.Context, c *Config, mc metadata.Interface) ([]LegacySecret, error) {
	var out []LegacySecret
	opts := metav1.ListOptions{Limit: pageSize, FieldSelector: "type=" + string(corev1.SecretTypeServiceAccountToken)}
	res := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	for {
		ctx1, cancel := context.WithTimeout(ctx, c.Timeout)
		list, err := mc.Resource(res).List(ctx1, opts)
		cancel()
		if apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("legacy-token inventory is opt-in (list secrets grants their data too): bind the credwatch-legacy-tokens ClusterRole of deploy/clusterrole.yaml to enable it: %w", err)
		}
		if err != nil {
			return nil, fmt.Errorf("list secrets of type %s (metadata only): %w", corev1.SecretTypeServiceAccountToken, err)
		}
		for _, s := range list.Items {
			out = append(out, LegacySecret{Namespace: s.Namespace, Name: s.Name,
				ServiceAccount: s.Annotations[annotSAName], LastUsed: s.Labels[labelLastUsed],
				InvalidSince: s.Labels[labelInvalidSince], Created: s.CreationTimestamp.Time})
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// getLeases reads the controllers' leases (pkg/liveness judges them at now).
func getLeases(ctx context.Context, c *Config, cs kubernetes.Interface, now time.Time) ([]Lease, error) {
	out := make([]Lease, 0, len(liveness.Controllers))
	for _, ctl := range liveness.Controllers {
		ctx1, cancel := context.WithTimeout(ctx, c.Timeout)
		st, err := liveness.LeaseStatus(ctx1, cs, ctl.Lease, now)
		cancel()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// listNodes pages through nodes, noting the cloud provider's uninitialized taint.
func listNodes(ctx context.Context, c *Config, cs kubernetes.Interface) ([]Node, error) {
	var out []Node
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		ctx1, cancel := context.WithTimeout(ctx, c.Timeout)
		list, err := cs.CoreV1().Nodes().List(ctx1, opts)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		for _, n := range list.Items {
			cn := Node{Name: n.Name, Created: n.CreationTimestamp.Time}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					cn.Ready, cn.Heartbeat = c.Status == corev1.ConditionTrue, c.LastHeartbeatTime.Time
				}
			}
			for _, t := range n.Spec.Taints {
				if t.Key == taintUninit {
					cn.Uninitialized = true
				}
			}
			out = append(out, cn)
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}
