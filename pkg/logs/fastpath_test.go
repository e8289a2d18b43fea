// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/logs/envelope"
)

// The per-line parsers' fast paths against the plain code they replace (the differential
// safety net of the dense-log work): same answers on the seeds and on fuzzed input.

func refHostFromPod(pod, container string) string {
	node := pod
	for _, p := range []string{container + "-", "kube-apiserver-", "kube-controller-manager-", "kube-scheduler-", "etcd-", "cloud-controller-manager-"} {
		if p != "-" && strings.HasPrefix(pod, p) && len(pod) > len(p) {
			node = pod[len(p):]
			break
		}
	}
	return shortHost(node)
}

// refKlogTime is envelope.KlogHeader's numbers as strconv.Atoi read them.
func refKlogTime(s string) (month, day, hh, mm, ss, us int) {
	month, _ = strconv.Atoi(s[1:3])
	day, _ = strconv.Atoi(s[3:5])
	hh, _ = strconv.Atoi(s[6:8])
	mm, _ = strconv.Atoi(s[9:11])
	ss, _ = strconv.Atoi(s[12:14])
	if s[14] == '.' {
		j := 15
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		us, _ = strconv.Atoi(s[15:j])
	}
	return
}

func checkFastPaths(t *testing.T, line string) {
	if got, want := envelope.IndexBracketSpace(line), strings.Index(line, "] "); got != want {
		t.Errorf("envelope.IndexBracketSpace(%q) = %d, want %d", line, got, want)
	}
	pod, container, _ := strings.Cut(line, " ")
	if got, want := hostFromPod(pod, container), refHostFromPod(pod, container); got != want {
		t.Errorf("hostFromPod(%q, %q) = %q, want %q", pod, container, got, want)
	}
	if _, ok := envelope.KlogHeader(line); ok {
		_, _, cri := parseCRI(line, nil)
		_, _, _, _, syslog := envelope.Syslog(line, time.Now())
		_, _, _, kubectl := envelope.KubectlPrefix(line)
		_, _, compose := envelope.Compose(line)
		if cri || syslog || kubectl || compose {
			t.Errorf("%q: a klog header and an envelope (cri %v, syslog %v, kubectl %v, compose %v)", line, cri, syslog, kubectl, compose)
		}
	}
	if h, ok := envelope.KlogHeader(line); ok && len(line) > 14 {
		m, d, hh, mm, ss, us := refKlogTime(line)
		if h.Month != m || h.Day != d || h.HH != hh || h.MM != mm || h.SS != ss || h.US != us {
			t.Errorf("envelope.KlogHeader(%q) time = %+v, want %d %d %d %d %d %d", line, h, m, d, hh, mm, ss, us)
		}
	}
	for _, f := range []string{"klog", "json", "cri", line} {
		if got := joinFormat(pod, f); got != pod+"+"+f {
			t.Errorf("joinFormat(%q, %q) = %q", pod, f, got)
		}
	}
}

var fastPathSeeds = append([]string{
	`{"log":"x"}`, `"log"`, `"log":`, `{"msg"`, `"`, `""`, `"":`, ``,
	`kube-apiserver-ip-10-0-1-2.eu-west-2.compute.internal kube-apiserver E1129 08:00:00.1 1 a.go:1] x`,
	`etcd-master-0 etcd x`, `x-host x`, `x- x`, `- `, `kube-scheduler- kube-scheduler`,
	`web_1  | E1129 08:00:00.000000 1 a.go:1] x`, `a | b`, `| x`, ` |`, `a || b | c`,
	`E1231 23:59:59.9999999999999999999999 1 x.go:1] y`, `I0101 00:00:00 1 x.go:1] y`,
	`E1129 08:00:00.000000 1 a.go:1] x | y`, `W0101 00:00:00 1 x.go:1] [pod/a/b] y`, `I1231 23:59:59 x-y | z`,
	`F0229 12:00:00.1 a b c`, `E1129 08:00:00.000000 1 a.go:1] "m" err="[x]"`,
}, benchLines...)

func TestFastPaths(t *testing.T) {
	for _, s := range fastPathSeeds {
		checkFastPaths(t, s)
	}
}

func FuzzFastPaths(f *testing.F) {
	for _, s := range fastPathSeeds {
		f.Add(s)
	}
	f.Fuzz(checkFastPaths)
}
