// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

// TestEventsAndMetricsRedacted: a Kubernetes Event and a scrape leave the process as stdout
// does, so a token signature, a known secret or URL userinfo that reaches a finding's message or
// a member's name is not in them.
func TestEventsAndMetricsRedacted(t *testing.T) {
	const sig, known, pass = "c2lnbmF0dXJlLXRoYXQtbXVzdC1nbw", "opaque-kubeconfig-token-4f9a", "hunter2-userinfo"
	msg := "apiserver-2 rejected " + redacttest.JWS(sig) + " with Authorization: Bearer " + known
	member := "https://admin:" + pass + "@127.0.0.1:6443"
	raised := Event{Kind: FindingRaised, ID: "member-key-drift", Member: member, Severity: catalogue.Error, Message: msg}
	state := &State{Interval: 1, Time: time.Now(), Members: []MemberState{{Endpoint: check.Endpoint{Name: member}, Up: true}}}
	leaks := func(where, out string) {
		t.Helper()
		for _, s := range []string{sig, known, pass} {
			if strings.Contains(out, s) {
				t.Errorf("%s carries %q:\n%s", where, s, out)
			}
		}
	}

	cs := fake.NewClientset()
	k := NewKubeEventsFor(cs)
	k.Known = &redact.Known{}
	k.Known.Add(known)
	k.Observe(state, []Event{raised})
	var events string
	for range 200 { // the broadcaster records asynchronously
		list, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > 0 {
			events = list.Items[0].Message
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	k.Stop()
	if events == "" {
		t.Fatal("no Event recorded")
	}
	leaks("the Event", events)

	m := NewMetrics(BuildInfo{})
	m.Observe(state, nil)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "credwatch_member_up{") {
		t.Fatalf("no member_up series:\n%s", b)
	}
	leaks("/metrics", string(b))
}
