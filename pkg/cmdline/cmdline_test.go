// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cmdline

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want Flags
	}{
		{"equals and repeated", []string{"kube-apiserver", "--service-account-issuer=https://a", "--service-account-issuer=https://b", "--tls-cert-file=x"},
			Flags{"service-account-issuer": {"https://a", "https://b"}, "tls-cert-file": {"x"}}},
		{"space separated", []string{"--secure-port", "6443", "--advertise-address", "10.0.0.1"},
			Flags{"secure-port": {"6443"}, "advertise-address": {"10.0.0.1"}}},
		{"bool without value", []string{"--service-account-extend-token-expiration", "--secure-port=1"},
			Flags{"service-account-extend-token-expiration": {"true"}, "secure-port": {"1"}}},
		{"bool at the end", []string{"--x=1", "--profiling"}, Flags{"x": {"1"}, "profiling": {"true"}}},
		{"empty value", []string{"--cloud-config="}, Flags{"cloud-config": {""}}},
		{"not flags", []string{"etcd", "-x", "--", "--=v"}, Flags{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Parse(tt.argv); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHelpers(t *testing.T) {
	f := Parse([]string{"--cloud-config=/a", "--api-audiences=a, b,,c", "--cloud-config", "/b", "--api-audiences", "d"})
	if f.First("cloud-config") != "/a" || f.Last("cloud-config") != "/b" || f.First("nope") != "" || f.Last("nope") != "" {
		t.Errorf("first %q last %q", f.First("cloud-config"), f.Last("cloud-config"))
	}
	if got := f.List("api-audiences"); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("list %q", got)
	}
}

// FuzzParse: every value Parse returns was on the command line, attached to its flag, and the
// values of a flag keep their order.
func FuzzParse(f *testing.F) {
	f.Add("--service-account-issuer=https://a --secure-port 6443 --x --y=")
	f.Fuzz(func(t *testing.T, line string) {
		argv := strings.Fields(line)
		flags := Parse(argv)
		for name, vals := range flags {
			next := 0
			for _, v := range vals {
				found := false
				for i := next; i < len(argv) && !found; i++ {
					switch {
					case argv[i] == "--"+name+"="+v:
						found, next = true, i+1
					case argv[i] == "--"+name && (i+1 < len(argv) && argv[i+1] == v || v == "true"):
						found, next = true, i+1
					}
				}
				if !found {
					t.Fatalf("%q: value %q of --%s is not on the command line in order", line, v, name)
				}
			}
			if flags.Last(name) != vals[len(vals)-1] || flags.First(name) != vals[0] {
				t.Fatalf("first/last of %s disagree with %q", name, vals)
			}
		}
	})
}
