// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"maps"
	"testing"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/cloud"
)

// TestInsecureProviders: every value the flag's help and its usage error name is accepted.
func TestInsecureProviders(t *testing.T) {
	both := map[cloud.Provider]bool{cloud.VSphere: true, cloud.OpenStack: true}
	for _, tt := range []struct {
		name   string
		values []string
		want   map[cloud.Provider]bool // nil: a usage error
	}{
		{"none", nil, map[cloud.Provider]bool{}},
		{"vsphere", []string{"vsphere"}, map[cloud.Provider]bool{cloud.VSphere: true}},
		{"openstack", []string{" OpenStack "}, map[cloud.Provider]bool{cloud.OpenStack: true}},
		{"no value", []string{"vsphere", "openstack"}, both},
		{"both", []string{"both"}, both},
		{"all", []string{"all"}, both},
		{"false", []string{"false"}, map[cloud.Provider]bool{}},
		{"aws", []string{"aws"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := insecureProviders(tt.values)
			if tt.want == nil {
				if cli.Code(err) != cli.ExitUsage {
					t.Errorf("err %v, want a usage error", err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tt.want) {
				t.Errorf("%v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
