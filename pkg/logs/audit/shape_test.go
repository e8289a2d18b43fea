// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// eventFields are the JSON fields of audit.k8s.io/v1 Event at v1.36.3
// (k8s.io/apiserver@kubernetes-1.36.3 pkg/apis/audit/v1/types.go:71-146).
var eventFields = map[string]bool{
	"kind": true, "apiVersion": true, "level": true, "auditID": true, "stage": true, "requestURI": true,
	"verb": true, "user": true, "impersonatedUser": true, "authenticationMetadata": true, "sourceIPs": true,
	"userAgent": true, "objectRef": true, "responseStatus": true, "requestObject": true, "responseObject": true,
	"requestReceivedTimestamp": true, "stageTimestamp": true, "annotations": true,
}

// TestFixturesShape: the hand-written events are in the shape v1.36.3 writes: no field the Event
// type lacks, and user, responseStatus and the TokenRequest objects decode strictly into the
// published Go types.
func TestFixturesShape(t *testing.T) {
	files, err := filepath.Glob("testdata/members/*/audit.log")
	if err != nil || len(files) == 0 {
		t.Fatal("no fixtures", err)
	}
	strict := func(raw json.RawMessage, v any) error {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		return d.Decode(v)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			var ev map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			for k := range ev {
				if !eventFields[k] {
					t.Errorf("%s:%d: field %q is not in audit.k8s.io/v1 Event", f, n, k)
				}
			}
			var u authnv1.UserInfo
			if err := strict(ev["user"], &u); err != nil {
				t.Errorf("%s:%d: user: %v", f, n, err)
			}
			var st metav1.Status
			if err := strict(ev["responseStatus"], &st); err != nil {
				t.Errorf("%s:%d: responseStatus: %v", f, n, err)
			}
			for _, k := range []string{"requestObject", "responseObject"} {
				if ev[k] == nil {
					continue
				}
				var tr authnv1.TokenRequest
				if err := strict(ev[k], &tr); err != nil {
					t.Errorf("%s:%d: %s: %v", f, n, k, err)
				}
			}
		}
	}
}

// TestFinal: each request is counted at one event; a request refused by authentication has only
// its ResponseStarted event (kube-apiserver's failed-authentication handler writes no other).
func TestFinal(t *testing.T) {
	for _, c := range []struct {
		stage string
		code  int
		user  string
		want  bool
	}{
		{"", 200, "", true}, {"ResponseComplete", 200, "", true}, {"Panic", 500, "", true},
		{"RequestReceived", 0, "", false}, {"ResponseStarted", 200, "", false}, {"ResponseStarted", 401, "", true},
		{"ResponseComplete", 401, "", true}, {"RequestReceived", 401, "", false},
		// A watch that passed authentication and was answered 401 later: its ResponseComplete counts.
		{"ResponseStarted", 401, "alice", false}, {"ResponseComplete", 401, "alice", true},
	} {
		ev := Event{Stage: c.stage}
		ev.User.Username = c.user
		if c.code != 0 {
			ev.ResponseStatus = &struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}{Code: c.code}
		}
		if got := ev.Final(); got != c.want {
			t.Errorf("stage %q code %d user %q: Final() = %t, want %t", c.stage, c.code, c.user, got, c.want)
		}
	}
}
