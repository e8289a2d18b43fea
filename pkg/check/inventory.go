// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/kubelet"
	"github.com/credwatch/credwatch/pkg/liveness"
)

// Well-known names.
const (
	labelLastUsed     = "kubernetes.io/legacy-token-last-used"
	labelInvalidSince = "kubernetes.io/legacy-token-invalid-since"
	annotSAName       = "kubernetes.io/service-account.name"
	taintUninit       = liveness.TaintUninitialized
)

// listPods reads every pod, keeping only what the checks need.
func listPods(ctx context.Context, c *Config, cs kubernetes.Interface) ([]Pod, string, error) {
	pods := cs.CoreV1().Pods("")
	return readCached(ctx, c, lister[corev1.Pod]{what: "pods", stream: protoStream(cs.CoreV1().RESTClient(), "pods", acceptProto),
		unmarshal: func(b []byte, p *corev1.Pod) error { return p.Unmarshal(b) },
		list:      listed(pods.List, func(l *corev1.PodList) ([]corev1.Pod, metav1.ListMeta) { return l.Items, l.ListMeta })}, compactPod)
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

// countServiceAccounts counts the service accounts: a consistent read of one, whose
// remainingItemCount says how many follow, else by reading their metadata.
func countServiceAccounts(ctx context.Context, c *Config, mc metadata.Interface, rc rest.Interface) (int, string, error) {
	sas := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"})
	if c.Inventory != ReadPaged {
		ctx1, cancel := context.WithTimeout(ctx, c.Timeout)
		list, err := sas.List(ctx1, metav1.ListOptions{Limit: 1})
		cancel()
		switch {
		case err == nil && list.Continue == "":
			return len(list.Items), HowCount, nil
		case err == nil && list.RemainingItemCount != nil:
			return len(list.Items) + int(*list.RemainingItemCount), HowCount, nil
		case err != nil && denied(err):
			return 0, "", fmt.Errorf("list serviceaccounts: %w", err)
		}
	}
	items, how, err := readCached(ctx, c, metaLister(mc, rc, "serviceaccounts", "serviceaccounts", metav1.ListOptions{}),
		func(*metav1.PartialObjectMetadata) struct{} { return struct{}{} })
	return len(items), how, err
}

// listLegacySecrets reads the metadata (never the data) of service-account token Secrets.
func listLegacySecrets(ctx context.Context, c *Config, mc metadata.Interface, rc rest.Interface) ([]LegacySecret, string, error) {
	out, how, err := readCached(ctx, c, metaLister(mc, rc, "secrets", fmt.Sprintf("secrets of type %s (metadata only)", corev1.SecretTypeServiceAccountToken),
		metav1.ListOptions{FieldSelector: "type=" + string(corev1.SecretTypeServiceAccountToken)}),
		func(s *metav1.PartialObjectMetadata) LegacySecret {
			return LegacySecret{Namespace: s.Namespace, Name: s.Name,
				ServiceAccount: s.Annotations[annotSAName], LastUsed: s.Labels[labelLastUsed],
				InvalidSince: s.Labels[labelInvalidSince], Created: s.CreationTimestamp.Time}
		})
	if apierrors.IsForbidden(err) {
		return nil, "", fmt.Errorf("legacy-token inventory is opt-in (list secrets grants their data too): bind the credwatch-legacy-tokens ClusterRole (credwatch check --print-rbac) to enable it: %w", err)
	}
	return out, how, err
}

// metaLister lists the metadata of one core resource, cluster-wide.
func metaLister(mc metadata.Interface, rc rest.Interface, resource, what string, opts metav1.ListOptions) lister[metav1.PartialObjectMetadata] {
	r := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: resource})
	return lister[metav1.PartialObjectMetadata]{what: what, opts: opts, stream: protoStream(rc, resource, acceptMetaProto),
		unmarshal: func(b []byte, m *metav1.PartialObjectMetadata) error { return m.Unmarshal(b) },
		list: listed(r.List, func(l *metav1.PartialObjectMetadataList) ([]metav1.PartialObjectMetadata, metav1.ListMeta) {
			return l.Items, l.ListMeta
		})}
}

// What the streamed lists accept: the protobuf encoding only, of the type or of its metadata.
const (
	acceptProto     = "application/vnd.kubernetes.protobuf"
	acceptMetaProto = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
)

// protoStream returns the body of a cluster-wide list of resource through rc's core/v1 client.
func protoStream(rc rest.Interface, resource, accept string) func(context.Context, metav1.ListOptions) (io.ReadCloser, error) {
	return func(ctx context.Context, o metav1.ListOptions) (io.ReadCloser, error) {
		return rc.Get().Resource(resource).
			VersionedParams(&o, scheme.ParameterCodec).SetHeader("Accept", accept).Stream(ctx)
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

// listNodes reads every node, consistently, noting its readiness, heartbeat and the cloud
// provider's uninitialized taint.
func listNodes(ctx context.Context, c *Config, cs kubernetes.Interface) ([]Node, string, error) {
	nodes := cs.CoreV1().Nodes()
	return readConsistent(ctx, c, lister[corev1.Node]{what: "nodes", stream: protoStream(cs.CoreV1().RESTClient(), "nodes", acceptProto),
		unmarshal: func(b []byte, n *corev1.Node) error { return n.Unmarshal(b) },
		list:      listed(nodes.List, func(l *corev1.NodeList) ([]corev1.Node, metav1.ListMeta) { return l.Items, l.ListMeta })}, compactNode)
}

func compactNode(n *corev1.Node) Node {
	st := kubelet.StatusOf(n)
	cn := Node{Name: n.Name, Created: n.CreationTimestamp.Time, Ready: st.Ready, Heartbeat: st.Heartbeat}
	for _, t := range n.Spec.Taints {
		if t.Key == taintUninit {
			cn.Uninitialized = true
		}
	}
	return cn
}
