// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"fmt"
	"net/http"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/credwatch/credwatch/pkg/redact"
)

// KubeEvents records a Kubernetes Event when a finding is raised (Warning) and when it clears
// (Normal): on the member's static Pod when it has one, else on the default/kubernetes Endpoints.
type KubeEvents struct {
	b      record.EventBroadcaster
	rec    record.EventRecorder
	pod    map[string]string // member -> kube-system/<pod>, from the states seen
	raised map[string]bool   // findings an Event was recorded for (ID, member)
	// Known are the secrets taken out of every Event's message besides what redact.Text finds
	// (an Event leaves the process as surely as stdout does).
	Known *redact.Known
}

// NewKubeEvents records through the cluster endpoint of rc.
func NewKubeEvents(rc *rest.Config) (*KubeEvents, error) {
	rc = rest.CopyConfig(rc)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return closeConns{rt} })
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("client for events: %w", err)
	}
	return NewKubeEventsFor(cs), nil
}

// NewKubeEventsFor records through cs.
func NewKubeEventsFor(cs kubernetes.Interface) *KubeEvents {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(retrySink{EventSink: &typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")}, sleep: 200 * time.Millisecond})
	return &KubeEvents{b: b, rec: b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "credwatch-watch"}), pod: map[string]string{}, raised: map[string]bool{}}
}

// Observe records the finding events at warning or above (an info finding, such as a check
// skipped for one interval, makes no Event), and their clearing.
func (k *KubeEvents) Observe(s *State, events []Event) {
	for _, m := range s.Members {
		if m.StaticPod != "" {
			k.pod[m.Name] = m.StaticPod
		}
	}
	for _, e := range events {
		key := e.ID + "\x00" + e.Member
		switch {
		case e.Kind == FindingRaised && e.Severity.AtLeast(catalogue.Warning):
			k.raised[key] = true
			k.rec.Event(k.object(e.Member), corev1.EventTypeWarning, Reason(e.ID), k.message(e.Message))
		case e.Kind == FindingCleared && k.raised[key]:
			delete(k.raised, key)
			msg := e.Message
			if _, onPod := k.pod[e.Member]; !onPod && e.Member != "" {
				msg += " (" + e.Member + ")" // on default/kubernetes nothing else names the member
			}
			k.rec.Event(k.object(e.Member), corev1.EventTypeNormal, Reason(e.ID)+"Cleared", k.message(msg))
		}
	}
}

// Stop flushes and stops the broadcaster.
func (k *KubeEvents) Stop() { k.b.Shutdown() }

func (k *KubeEvents) object(member string) *corev1.ObjectReference {
	if p, ok := k.pod[member]; ok {
		ns, name, _ := strings.Cut(p, "/")
		return &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: name}
	}
	return &corev1.ObjectReference{Kind: "Endpoints", APIVersion: "v1", Namespace: "default", Name: "kubernetes"}
}

// Reason turns a catalogue ID into an Event reason: member-key-drift → MemberKeyDrift.
func Reason(id string) string {
	var b strings.Builder
	for _, p := range strings.Split(id, "-") {
		if p != "" {
			b.WriteString(strings.ToUpper(p[:1]) + p[1:])
		}
	}
	return b.String()
}

// message is an Event's message: redacted, then cut to the length an Event keeps.
func (k *KubeEvents) message(s string) string { return trim(k.Known.Redact(redact.Text(s))) }

func trim(s string) string {
	const maxLen = 1000
	if len(s) > maxLen {
		return s[:maxLen-3] + "..."
	}
	return s
}
