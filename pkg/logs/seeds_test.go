// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
)

// TestSeedLines checks every log line quoted in the seed incident report (seeds/000_*, copied
// to testdata/seed-000.log): each classifies to the right cause and host, or to nothing.
func TestSeedLines(t *testing.T) {
	t.Parallel()
	want := []struct{ contains, cause, host string }{
		{"ip-10-0-212-164.eu-west-2.compute.internal kube-apiserver E1213", "bound-object-invalidated", "ip-10-0-212-164"},
		{"ip-10-0-80-61.eu-west-2", "bound-object-invalidated", "ip-10-0-80-61"},
		{"ip-10-0-78-60.eu-west-2", "serviceaccount-lookup-failed", "ip-10-0-78-60"},
		{"ip-10-0-228-80.eu-west-2", "bound-object-invalidated", "ip-10-0-228-80"},
		{"ip-10-0-252-80.eu-west-2", "signing-key-unknown", "ip-10-0-252-80"},
		{"CrashLoopBackOff", "etcd-crashloop", "ip-10-224-128-148"},
		{"RemoveContainer", "", ""},
		{"cloud-init[1078]", "", ""},
		{"Trying to delete pod", "", ""},
		{"Deleted mirror pod because it is outdated", "mirror-pod-deleted", "ip-10-224-148-177"},
		{"failed to update lease", "lb-timeout", "ip-10-224-148-177"},
	}
	f, err := os.Open("testdata/seed-000.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cl := cause.NewClassifier(catalogue.Default())
	lc := lineHint{host: "seed", ref: time.Date(2022, 12, 31, 0, 0, 0, 0, time.UTC)}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		n++
		var exp *struct{ contains, cause, host string }
		for i := range want {
			if strings.Contains(line, want[i].contains) {
				exp = &want[i]
				break
			}
		}
		if exp == nil {
			t.Fatalf("line %d has no expectation: %s", n, line)
		}
		ev, ok := Classify(cl, parseRecord(line, lc))
		switch {
		case exp.cause == "" && ok:
			t.Errorf("line %d: got %s on %s, want nothing: %s", n, ev.Cause, ev.Host, line)
		case exp.cause != "" && (!ok || ev.Cause != exp.cause || ev.Host != exp.host):
			t.Errorf("line %d: got %q on %q (ok=%v), want %s on %s: %s", n, ev.Cause, ev.Host, ok, exp.cause, exp.host, line)
		case ok && ev.Time.Year() != 2022:
			t.Errorf("line %d: time %v, want 2022", n, ev.Time)
		}
	}
	if n != 29 {
		t.Errorf("read %d seed lines, want 29", n)
	}
}
