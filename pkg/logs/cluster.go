// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// ClusterOptions selects the control-plane pods whose logs `logs --from-cluster` reads.
type ClusterOptions struct {
	Selectors []string      // label selectors in kube-system; each pod once
	Since     time.Duration // only lines newer than this; 0 means all the kubelet kept
	Previous  bool          // the previous container instance's log
	// SinceTime, when set, reads only lines from then on (the node's clock); it wins over Since.
	SinceTime time.Time
	// Timestamps prefixes every line with the kubelet's RFC 3339 timestamp and a space
	// (`credwatch watch` follows logs by it).
	Timestamps bool
}

// DefaultSelectors are the kube-apiserver static pods; ControllerSelectors add KCM and CCM.
var (
	DefaultSelectors    = []string{"component=kube-apiserver"}
	ControllerSelectors = []string{"component=kube-controller-manager", "component=cloud-controller-manager",
		"k8s-app=cloud-controller-manager"}
)

// ClusterInputs lists the selected pods and returns one input per pod container; the log is
// streamed from the API only when the input is read.
func ClusterInputs(ctx context.Context, pods corev1client.PodInterface, o ClusterOptions) ([]Input, error) {
	seen := map[string]bool{}
	var ins []Input
	for _, sel := range o.Selectors {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return nil, fmt.Errorf("list pods %q: %w", sel, err)
		}
		for _, p := range list.Items {
			if seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			for _, c := range p.Spec.Containers {
				opts := &corev1.PodLogOptions{Container: c.Name, Previous: o.Previous, Timestamps: o.Timestamps}
				if !o.SinceTime.IsZero() {
					opts.SinceTime = &metav1.Time{Time: o.SinceTime}
				} else if o.Since > 0 {
					s := int64(o.Since.Seconds())
					opts.SinceSeconds = &s
				}
				name, host := p.Name+"/"+c.Name, shortHost(p.Spec.NodeName)
				if host == "" {
					host = hostFromPod(p.Name, c.Name)
				}
				ins = append(ins, Input{Name: name, Host: host, Component: normalizeComponent(c.Name), ModTime: time.Now(),
					Open: func() (io.ReadCloser, error) {
						rc, err := pods.GetLogs(p.Name, opts).Stream(ctx)
						if err != nil {
							return nil, fmt.Errorf("stream log of %s: %w", name, err)
						}
						return rc, nil
					}})
			}
		}
	}
	return ins, nil
}
