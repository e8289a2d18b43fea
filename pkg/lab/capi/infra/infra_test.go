// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package infra

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/credwatch/credwatch/pkg/lab/controlplane/lb"
)

// Every CRD carries the contract label and serves v1alpha1 of the provider's group; LabCluster
// and LabMachine have a status subresource, the template does not.
func TestCRDs(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"LabCluster": true, "LabMachine": true, "LabMachineTemplate": false}
	for _, c := range crds {
		kind, _, _ := unstructured.NestedString(c.Object, "spec", "names", "kind")
		status, ok := want[kind]
		if !ok {
			t.Errorf("unexpected CRD %s (kind %q)", c.GetName(), kind)
			continue
		}
		delete(want, kind)
		if c.GetLabels()[ContractLabel] != Version {
			t.Errorf("%s: label %s = %q, want %s", c.GetName(), ContractLabel, c.GetLabels()[ContractLabel], Version)
		}
		if g, _, _ := unstructured.NestedString(c.Object, "spec", "group"); g != Group || !strings.HasSuffix(c.GetName(), "."+Group) {
			t.Errorf("%s: group %q", c.GetName(), g)
		}
		vs := c.Object["spec"].(map[string]any)["versions"].([]any)
		v := vs[0].(map[string]any)
		_, hasStatus := v["subresources"]
		if len(vs) != 1 || v["name"] != Version || hasStatus != status {
			t.Errorf("%s: versions %v", c.GetName(), vs)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing CRDs for %v", want)
	}
}

func TestLoadBalancerComplete(t *testing.T) {
	tests := []struct {
		name    string
		in      LoadBalancer
		want    LoadBalancer
		wantErr string
	}{
		{name: "defaults", want: LoadBalancer{HealthCheck: lb.CheckHTTPSReadyz, Deregistration: OnDrain, IntervalSeconds: 10, UnhealthyThreshold: 3}},
		{name: "the first report's ELB", in: LoadBalancer{HealthCheck: lb.CheckTLS, Deregistration: OnMachineDelete},
			want: LoadBalancer{HealthCheck: lb.CheckTLS, Deregistration: OnMachineDelete, IntervalSeconds: 10, UnhealthyThreshold: 3}},
		{name: "unknown check", in: LoadBalancer{HealthCheck: "http"}, wantErr: `health check "http"`},
		{name: "unknown deregistration", in: LoadBalancer{Deregistration: "never"}, wantErr: `deregistration "never": want on-machine-delete or on-drain`},
		{name: "interval", in: LoadBalancer{IntervalSeconds: 600}, wantErr: "every 600 s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.in
			err := b.Complete()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Complete() = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || b != tt.want {
				t.Errorf("Complete() = %+v, %v; want %+v", b, err, tt.want)
			}
		})
	}
	if got := ProviderID("cp-2"); got != "lab://cp-2" {
		t.Errorf("ProviderID = %q", got)
	}
}

func TestBalancerConfig(t *testing.T) {
	c, err := LoadBalancer{HealthCheck: lb.CheckTLS}.BalancerConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != lb.Ready || c.Check == nil || c.Interval.Seconds() != DefaultIntervalSeconds || c.UnhealthyAfter != DefaultUnhealthyThreshold {
		t.Errorf("BalancerConfig = %+v", c)
	}
	if _, err := (LoadBalancer{HealthCheck: "udp"}).BalancerConfig(nil); err == nil {
		t.Error("BalancerConfig accepted an unknown check")
	}
}
