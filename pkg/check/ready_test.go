package check

import (
	"slices"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

func TestParseReadyz(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want []string
	}{
		{"[+]ping ok\n[+]log ok\nreadyz check passed\n", nil},
		{"[+]ping ok\n[-]etcd failed: reason withheld\n[+]informer-sync ok\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n", []string{"etcd", "etcd-readiness"}},
		{"", nil},
		{"  [-]shutdown failed: reason withheld", []string{"shutdown"}},
	} {
		if got := ParseReadyz(tc.body); !slices.Equal(got, tc.want) {
			t.Errorf("ParseReadyz(%q) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

func TestCheckReadiness(t *testing.T) {
	t.Parallel()
	s := &Snapshot{Members: []Member{
		{Name: "a", Reachable: true},
		{Name: "b", Reachable: true, NotReady: []string{"etcd"}, FoundBy: []string{"flag"}},
		{Name: "c", Reachable: true, NotReady: []string{"etcd"}, FoundBy: []string{"endpointslice"}},
		{Name: "d", Reachable: false, NotReady: []string{"etcd"}},
	}}
	fs := checkReadiness(s)
	if len(fs) != 2 || fs[0].Member != "b" || fs[0].Severity != catalogue.Warning || fs[1].Member != "c" || fs[1].Severity != catalogue.Error {
		t.Fatalf("findings: %+v", fs)
	}
}
