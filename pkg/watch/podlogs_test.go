// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/credwatch/credwatch/pkg/logs"
)

func TestCutTimestamp(t *testing.T) {
	ts, rest, ok := cutTimestamp("2026-11-30T10:00:01.123456789Z " + keyDriftLine)
	if !ok || rest != keyDriftLine || !ts.Equal(time.Date(2026, 11, 30, 10, 0, 1, 123456789, time.UTC)) {
		t.Errorf("got %s %q %v", ts, rest, ok)
	}
	if _, rest, ok := cutTimestamp("no timestamp here"); ok || rest != "no timestamp here" {
		t.Errorf("untimestamped line: %q %v", rest, ok)
	}
	if ts, rest, ok := cutTimestamp("2026-11-30T10:00:01Z"); !ok || rest != "" || ts.IsZero() {
		t.Errorf("empty line: %s %q %v", ts, rest, ok)
	}
}

// TestReadPodLog checks that lines at or before the last one read are dropped (the overlap of two
// reads) and the newest timestamp is kept.
func TestReadPodLog(t *testing.T) {
	body := "2026-11-30T10:00:01Z old\n2026-11-30T10:00:02Z at last\n2026-11-30T10:00:03Z " + keyDriftLine + "\nno timestamp\n2026-11-30T10:00:04Z newest\n"
	in := logs.Input{Name: "kube-apiserver-cp-1/kube-apiserver", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader(body)), nil
	}}
	last := time.Date(2026, 11, 30, 10, 0, 2, 0, time.UTC)
	lines, newest, err := readPodLog(in, last)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{keyDriftLine, "no timestamp", "newest"}; !slices.Equal(lines, want) {
		t.Errorf("lines %q, want %q", lines, want)
	}
	if !newest.Equal(last.Add(2 * time.Second)) {
		t.Errorf("newest %s", newest)
	}
}

// TestPodLogs checks which pods are followed and how their lines are attributed (pure logic: the
// fake clientset's log body is a fixed text without timestamps).
func TestPodLogs(t *testing.T) {
	pod := func(name, component string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: map[string]string{"component": component}},
			Spec: corev1.PodSpec{NodeName: strings.TrimPrefix(name, component+"-"), Containers: []corev1.Container{{Name: component}}}}
	}
	cs := fake.NewClientset(pod("kube-apiserver-cp-1", "kube-apiserver"), pod("kube-apiserver-cp-2", "kube-apiserver"),
		pod("kube-scheduler-cp-1", "kube-scheduler"))
	p := newPodLogs(cs.CoreV1().Pods("kube-system"))
	ctx := context.Background()
	now := time.Now()
	got, err := p.poll(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for _, pl := range got {
		members = append(members, pl.member)
		if pl.source != pl.member+"/kube-apiserver" || !slices.Equal(pl.lines, []string{"fake logs"}) {
			t.Errorf("%s: source %q lines %q", pl.member, pl.source, pl.lines)
		}
	}
	if !slices.Equal(members, []string{"kube-apiserver-cp-1", "kube-apiserver-cp-2"}) {
		t.Errorf("members %q", members)
	}
	if err := cs.CoreV1().Pods("kube-system").Delete(ctx, "kube-apiserver-cp-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.poll(ctx, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.last["kube-apiserver-cp-2/kube-apiserver"]; ok || len(p.last) != 1 {
		t.Errorf("a pod no longer listed is still followed: %v", p.last)
	}
}

// TestLogCausesFromPods checks that the pods' lines are classified as the member's (its static pod).
func TestLogCausesFromPods(t *testing.T) {
	lc := newLogCauses(nil, time.Minute)
	got := lc.poll(time.Now(), []podLines{{member: "kube-apiserver-cp-1", source: "kube-apiserver-cp-1/kube-apiserver", lines: []string{infoLine, keyDriftLine}}})
	if len(got) != 1 || got[0].Member != "kube-apiserver-cp-1" || got[0].ID != "signing-key-unknown" || got[0].Source != "kube-apiserver-cp-1/kube-apiserver" {
		t.Fatalf("log causes %+v", got)
	}
}
