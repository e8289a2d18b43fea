// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCRI writes lines as a CRI container log file under dir/pod/container/0.log.
func writeCRI(t *testing.T, dir, pod, container string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, pod, container, "0.log")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReport sorts a controller's lines into its report: Pods, lost leases, failures by kind,
// and writes from each process's last summary; lines outside the window do not count.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	from := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	a := writeCRI(t, dir, "platform_flux-1_uid1", "controller",
		`2026-12-07T05:59:59Z stdout F {"t":"2026-12-07T05:59:59Z","pod":"flux-1","event":"write-error","status":401,"message":"Unauthorized"}`,
		`2026-12-07T06:00:01Z stdout F {"t":"2026-12-07T06:00:01Z","pod":"flux-1","event":"started"}`,
		`2026-12-07T06:00:02Z stderr F E1207 06:00:02.000000 1 leaderelection.go:441] Failed to update lock: context deadline exceeded`,
		`2026-12-07T06:00:03Z stdout F {"t":"2026-12-07T06:00:03Z","pod":"flux-1","event":"write-error","status":401,"reason":"Unauthorized","message":"Unauthorized"}`,
		`2026-12-07T06:00:04Z stdout F {"t":"2026-12-07T06:00:04Z","pod":"flux-1","event":"summary","writes":10,"errors":1}`,
		`2026-12-07T06:00:05Z stdout F {"t":"2026-12-07T06:00:05Z","pod":"flux-1","event":"lost-lease","message":"leader election lost"}`,
		`2026-12-07T06:00:06Z stdout F {"t":"2026-12-07T06:00:06Z","pod":"flux-1","event":"started"}`,
		`2026-12-07T06:00:09Z stdout F {"t":"2026-12-07T06:00:09Z","pod":"flux-1","event":"summary","writes":3}`,
	)
	b := writeCRI(t, dir, "platform_flux-2_uid2", "controller", `2026-12-07T06:00:10Z stdout F not json`)
	lines := readCRI([]string{a, b}, from, from.Add(time.Minute))
	r := report("flux", "worker", lines)
	if r.Pods != 2 || r.LostLease != 1 {
		t.Errorf("pods %d lost %d, want 2 and 1", r.Pods, r.LostLease)
	}
	got := map[string]int{}
	for _, e := range r.Errors {
		got[e.Kind] = e.Count
	}
	if got["401"] != 1 || got["timeout"] != 1 || got["leader election lost"] != 1 {
		t.Errorf("errors %+v", r.Errors)
	}
	if ok, failed := writes(lines); ok != 13 || failed != 1 {
		t.Errorf("writes %d failed %d, want 13 and 1 (two processes' last summaries)", ok, failed)
	}
}

func TestErrorKind(t *testing.T) {
	for line, want := range map[string]string{
		`E1207 leaderelection.go:332] error retrieving resource lock: the server was unable to return a response in the time allotted`: "timeout",
		`"Unable to authenticate the request" err="[invalid bearer token, service account token has been invalidated]"`:                "401 invalidated token",
		`I1207 leaderelection.go:297] failed to renew lease capi-system/controller-leader-election-capi: timed out`:                    "lease not renewed",
		`E1207 main.go:1] "problem running manager" err="leader election lost"`:                                                        "leader election lost",
		`I1207 controller.go:1] "Reconciling"`: "",
	} {
		if got := errorKind(line); got != want {
			t.Errorf("errorKind(%.40q) = %q, want %q", line, got, want)
		}
	}
}
