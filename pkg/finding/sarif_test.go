// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package finding

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strconv"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding/sariftest"
)

// TestSARIFSchema: the log validates against SARIF 2.1.0 when clean (rules is [], not null), with
// findings on members and objects, and with a finding on neither; the driver version is the one
// given (credwatch's version), "dev" when none is.
func TestSARIFSchema(t *testing.T) {
	drift := New("member-key-drift", "apiserver-2 signs with a key apiserver-1 does not know").On("apiserver-2", "")
	secret := New("cloud-credential-rejected", "vCenter rejected the login").On("", "kube-system/vsphere-cloud-secret")
	bare := Finding{ID: "check-skipped", Severity: catalogue.Info, Title: "skipped", Message: "no RBAC"}
	line := drift
	line.Location = &Location{File: "logs/apiserver 2.log", Line: 42}
	abs := bare
	abs.Location = &Location{File: "/var/log/pods/kube-system_kube-apiserver-cp-1_0/kube-apiserver/0.log", Line: 7}
	noLine := bare
	noLine.Location = &Location{File: "-"}
	tests := []struct {
		name     string
		version  string
		findings []Finding
	}{
		{"clean", "v0.2.0", nil},
		{"findings", "v0.2.0-3-gabcdef0", []Finding{drift, secret, drift.On("apiserver-3", "")}},
		{"no location, no version", "", []Finding{bare}},
		{"file and line", "v0.2.0", []Finding{line, abs, noLine}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := SARIF(Tool{Name: "credwatch check", Version: tt.version}, tt.findings)
			doc := sariftest.Decode(t, log)
			sariftest.Validate(t, doc)
			driver := doc.(map[string]any)["runs"].([]any)[0].(map[string]any)["tool"].(map[string]any)["driver"].(map[string]any)
			if rules, ok := driver["rules"].([]any); !ok {
				t.Errorf("rules = %#v, want a list", driver["rules"])
			} else if len(tt.findings) == 0 && len(rules) != 0 {
				t.Errorf("rules = %v on a clean run, want []", rules)
			}
			for i, res := range sariftest.Results(doc) {
				l := tt.findings[i].Location
				if l == nil {
					continue
				}
				pl := res.(map[string]any)["locations"].([]any)[0].(map[string]any)["physicalLocation"].(map[string]any)
				uri := pl["artifactLocation"].(map[string]any)["uri"]
				if u, err := url.Parse(uri.(string)); err != nil || u.Path != l.File {
					t.Errorf("uri %v of %q: %v, path %q", uri, l.File, err, u.Path)
				}
				if l.Line > 0 && pl["region"].(map[string]any)["startLine"] != json.Number(strconv.FormatInt(l.Line, 10)) {
					t.Errorf("region %v, want line %d", pl["region"], l.Line)
				}
			}
			want := tt.version
			if want == "" {
				want = "dev"
			}
			if driver["version"] != want {
				t.Errorf("driver version %v, want %q", driver["version"], want)
			}
		})
	}
}

// TestSARIFFingerprints: the same finding has the same fingerprint in another run, with another
// message (which carries times and counts); another member or object has another one.
func TestSARIFFingerprints(t *testing.T) {
	a := New("member-key-drift", "seen at 10:00").On("apiserver-2", "")
	again := New("member-key-drift", "seen at 10:05, 3 times").On("apiserver-2", "")
	other := New("member-key-drift", "seen at 10:00").On("apiserver-3", "")
	at := func(f Finding, line int64) Finding {
		f.Location = &Location{File: "apiserver-2.log", Line: line}
		return f
	}
	fp := func(f Finding) map[string]string {
		doc := sariftest.Decode(t, SARIF(Tool{Name: "credwatch check"}, []Finding{f}))
		res := sariftest.Results(doc)[0].(map[string]any)
		out := map[string]string{}
		for k, v := range res["partialFingerprints"].(map[string]any) {
			out[k] = v.(string)
		}
		return out
	}
	if !reflect.DeepEqual(fp(a), fp(again)) {
		t.Errorf("same finding, other message: fingerprints %v and %v differ", fp(a), fp(again))
	}
	if reflect.DeepEqual(fp(a), fp(other)) {
		t.Errorf("findings on two members share the fingerprint %v", fp(a))
	}
	if !reflect.DeepEqual(fp(at(a, 7)), fp(at(again, 7))) {
		t.Errorf("same line, other message: fingerprints %v and %v differ", fp(at(a, 7)), fp(at(again, 7)))
	}
	if reflect.DeepEqual(fp(at(a, 7)), fp(at(a, 8))) || reflect.DeepEqual(fp(a), fp(at(a, 7))) {
		t.Errorf("findings on two lines share a fingerprint")
	}
}

// TestSARIFInvocation: a log with a failed invocation validates, and says the run failed, its
// exit code and why; a successful one has no notification.
func TestSARIFInvocation(t *testing.T) {
	tests := []struct {
		name string
		inv  Invocation
	}{
		{"failed", Invocation{ExitCode: 3, Message: "cluster not reachable: dial tcp 127.0.0.1:1: connection refused"}},
		{"usage", Invocation{ExitCode: 2, Message: "bad input"}},
		{"findings", Invocation{Successful: true, ExitCode: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := sariftest.Decode(t, WithInvocation(SARIF(Tool{Name: "credwatch check"}, nil), tt.inv))
			sariftest.Validate(t, doc)
			inv := doc.(map[string]any)["runs"].([]any)[0].(map[string]any)["invocations"].([]any)[0].(map[string]any)
			if inv["executionSuccessful"] != tt.inv.Successful || inv["exitCode"] != json.Number(strconv.Itoa(tt.inv.ExitCode)) {
				t.Errorf("invocation %v, want %+v", inv, tt.inv)
			}
			notes, _ := inv["toolExecutionNotifications"].([]any)
			if (len(notes) > 0) != (tt.inv.Message != "") {
				t.Fatalf("notifications %v, want the message %q", notes, tt.inv.Message)
			}
			if len(notes) > 0 && notes[0].(map[string]any)["message"].(map[string]any)["text"] != tt.inv.Message {
				t.Errorf("notification %v, want %q", notes[0], tt.inv.Message)
			}
		})
	}
}
