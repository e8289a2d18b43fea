// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/platform"
)

// ControllerReport is what one controller of a cluster went through in a window, from its
// containers' logs on the hosts and its Pods in the API: a controller that lost its Lease
// exits, so its restarts and "leader election lost" lines say how often it stopped working.
type ControllerReport struct {
	Name  string `json:"name"`
	Where string `json:"where"` // "control plane" or "worker": where its Pods run
	// Pods counts the Pods that logged in the window: more than one is a Pod evicted (a drain)
	// and made again.
	Pods int `json:"pods"`
	// Restarts is the restart count of its containers in the API after the window (0 when the
	// API could not be read: see Error).
	Restarts int32 `json:"restarts"`
	// LostLease counts "leader election lost" (exits) in the window.
	LostLease int `json:"lostLease"`
	// Writes and WriteErrors are a platform controller's writes while it led, from its
	// summaries; 0 for Cluster API's managers.
	Writes      int `json:"writes,omitempty"`
	WriteErrors int `json:"writeErrors,omitempty"`
	// Errors are its failed calls in the window, by kind, most frequent first.
	Errors []ErrorCount `json:"errors,omitempty"`
	Error  string       `json:"error,omitempty"`
}

// ErrorCount is one kind of failure and how often a controller logged it.
type ErrorCount struct {
	Kind   string `json:"kind"`
	Count  int    `json:"count"`
	Sample string `json:"sample"` // the first line of the kind, cut to 300 bytes
}

// The kinds of failure a controller's log line is sorted into, checked in this order.
var errorKinds = []struct{ kind, marker string }{
	{"leader election lost", "leader election lost"},
	{"lease not renewed", "failed to renew lease"},
	{"401 invalidated token", "has been invalidated"},
	{"401", "Unauthorized"},
	{"401", "invalid bearer token"},
	{"timeout", "context deadline exceeded"},
	{"timeout", "unable to return a response in the time allotted"},
	{"timeout", "Client.Timeout exceeded"},
	{"stream reset", "INTERNAL_ERROR"},
	{"connection refused", "connection refused"},
	{"connection reset", "connection reset by peer"},
	{"EOF", "EOF"},
}

// errorKind is line's failure kind, "" if it is not one.
func errorKind(line string) string {
	for _, k := range errorKinds {
		if strings.Contains(line, k.marker) {
			return k.kind
		}
	}
	return ""
}

// logLine is one line of a CRI container log file.
type logLine struct {
	at   time.Time
	pod  string // the pod directory: NAMESPACE_NAME_UID
	text string
}

// readCRI reads the lines of files ("<RFC3339Nano> <stream> <tag> <text>") within [from, to].
func readCRI(files []string, from, to time.Time) []logLine {
	var out []logLine
	for _, f := range files {
		pod := filepath.Base(filepath.Dir(filepath.Dir(f)))
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		for sc.Scan() {
			fields := strings.SplitN(sc.Text(), " ", 4)
			if len(fields) != 4 {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, fields[0])
			if err != nil || at.Before(from) || at.After(to) {
				continue
			}
			out = append(out, logLine{at: at, pod: pod, text: fields[3]})
		}
		_ = fh.Close()
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// report sorts lines into a ControllerReport's counts.
func report(name, where string, lines []logLine) ControllerReport {
	r := ControllerReport{Name: name, Where: where}
	pods := map[string]bool{}
	byKind := map[string]*ErrorCount{}
	for _, l := range lines {
		pods[l.pod] = true
		if e, ok := platform.ParseEvent([]byte(l.text)); ok {
			switch e.Event {
			case platform.EventSummary:
				continue // cumulative per process: counted from the write errors instead
			case platform.EventLeading, platform.EventStarted:
				continue
			}
		}
		kind := errorKind(l.text)
		if kind == "" {
			continue
		}
		if kind == "leader election lost" {
			r.LostLease++
		}
		if byKind[kind] == nil {
			s := l.text
			if len(s) > 300 {
				s = s[:300]
			}
			byKind[kind] = &ErrorCount{Kind: kind, Sample: s}
		}
		byKind[kind].Count++
	}
	r.Pods = len(pods)
	for _, e := range byKind {
		r.Errors = append(r.Errors, *e)
	}
	sort.Slice(r.Errors, func(i, j int) bool {
		if r.Errors[i].Count != r.Errors[j].Count {
			return r.Errors[i].Count > r.Errors[j].Count
		}
		return r.Errors[i].Kind < r.Errors[j].Kind
	})
	return r
}

// writes sums a platform controller's writes in the window from its processes' last summaries.
func writes(lines []logLine) (ok, failed int) {
	last := map[string]platform.Event{} // by pod and process start: a summary is cumulative
	proc := map[string]int{}
	for _, l := range lines {
		e, isEvent := platform.ParseEvent([]byte(l.text))
		if !isEvent {
			continue
		}
		if e.Event == platform.EventStarted {
			proc[l.pod]++
		}
		if e.Event == platform.EventSummary {
			last[fmt.Sprintf("%s/%d", l.pod, proc[l.pod])] = e
		}
	}
	for _, e := range last {
		ok += e.Writes
		failed += e.Errors
	}
	return ok, failed
}

// PlatformReport is what each platform controller went through between from and to.
func (c *Lab) PlatformReport(ctx context.Context, cs kubernetes.Interface, ctrls []PlatformController, from, to time.Time) []ControllerReport {
	var out []ControllerReport
	files := c.PlatformLogs()
	for _, p := range ctrls {
		var mine []string
		for _, f := range files {
			if strings.Contains(f, "/"+PlatformNamespace+"_"+p.Name+"-") {
				mine = append(mine, f)
			}
		}
		where := "worker"
		if p.ControlPlane {
			where = "control plane"
		}
		lines := readCRI(mine, from, to)
		r := report(p.Name, where, lines)
		r.Writes, r.WriteErrors = writes(lines)
		r.Restarts, r.Error = restarts(ctx, cs, PlatformNamespace, "app="+p.Name)
		out = append(out, r)
	}
	return out
}

// ManagerReport is what each Cluster API manager went through between from and to, once Move
// installed them in the workload cluster (nil before), and the lab provider's controller when
// Move ran it there too (Config.ProviderInCluster), named after its Deployment.
func (c *Lab) ManagerReport(ctx context.Context, cs kubernetes.Interface, from, to time.Time) []ControllerReport {
	if c.inCluster == nil {
		return nil
	}
	var out []ControllerReport
	for i, name := range capi.ManagerNames() {
		r := report(name, "worker", readCRI(c.ManagerPodLogs(name), from, to))
		r.Restarts, r.Error = restarts(ctx, cs, capi.Namespaces()[i], capi.ManagerPodLabel)
		out = append(out, r)
	}
	if c.cloudSrv != nil {
		r := report(providerName, "worker", readCRI(c.ProviderPodLogs(), from, to))
		r.Restarts, r.Error = restarts(ctx, cs, capi.LabInfraNamespace(), capi.ManagerPodLabel)
		out = append(out, r)
	}
	return out
}

// restarts sums the container restarts of the Pods selected in namespace.
func restarts(ctx context.Context, cs kubernetes.Interface, namespace, selector string) (int32, string) {
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	pods, err := cs.CoreV1().Pods(namespace).List(rctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return 0, err.Error()
	}
	var n int32
	for _, p := range pods.Items {
		for _, st := range p.Status.ContainerStatuses {
			n += st.RestartCount
		}
	}
	return n, ""
}

// MemberMinute is how many lines of one kind a member's static pod logged in one minute of a
// window, with the first such line.
type MemberMinute struct {
	Minute int    `json:"minute"` // minutes after the window's start
	Member string `json:"member"`
	Kind   string `json:"kind,omitempty"`
	Lines  int    `json:"lines"`
	Sample string `json:"sample"`
}

// Refusals counts, per member (machine) and minute after from, the requests its kube-apiserver
// refused between from and to.
func (c *Lab) Refusals(machines []string, from, to time.Time) []MemberMinute {
	return c.StaticPodLines(machines, "kube-apiserver", func(line string) string {
		if strings.Contains(line, "Unable to authenticate the request") {
			return "refused"
		}
		return ""
	}, from, to)
}

// etcdKinds are the etcd lines that say its cluster lost or changed its leader, could not reach
// a peer, or was too slow, checked in this order.
var etcdKinds = []struct{ kind, marker string }{
	{"leader lost", "lost leader"},
	{"leader elected", "elected leader"},
	{"leadership transferred", "leadership transfer"},
	{"member removed", "removed member"},
	{"peer unreachable", "prober detected unhealthy status"},
	{"peer unreachable", "lost TCP streaming connection with remote peer"},
	{"peer unreachable", "failed to reach the peer URL"},
	{"slow request", "apply request took too long"},
	{"request timed out", "request timed out"},
}

// EtcdTrouble counts, per member and minute after from, the etcd lines of etcdKinds its etcd
// static pod logged between from and to.
func (c *Lab) EtcdTrouble(machines []string, from, to time.Time) []MemberMinute {
	return c.StaticPodLines(machines, "etcd", func(line string) string {
		for _, k := range etcdKinds {
			if strings.Contains(line, k.marker) {
				return k.kind
			}
		}
		return ""
	}, from, to)
}

// StaticPodLines counts, per member (machine), minute after from and kind, the lines of its
// static pod container (kube-apiserver, etcd) between from and to that kind names ("" skips).
func (c *Lab) StaticPodLines(machines []string, container string, kind func(string) string, from, to time.Time) []MemberMinute {
	var out []MemberMinute
	for _, m := range machines {
		files, err := c.staticPodLogs(m, container)
		if err != nil {
			continue
		}
		type key struct {
			min  int
			kind string
		}
		counts := map[key]*MemberMinute{}
		for _, l := range readCRI(files, from, to) {
			k := kind(l.text)
			if k == "" {
				continue
			}
			at := key{int(l.at.Sub(from) / time.Minute), k}
			if counts[at] == nil {
				s := l.text
				if len(s) > 300 {
					s = s[:300]
				}
				counts[at] = &MemberMinute{Minute: at.min, Member: m, Kind: k, Sample: s}
			}
			counts[at].Lines++
		}
		for _, mm := range counts {
			out = append(out, *mm)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Minute != b.Minute {
			return a.Minute < b.Minute
		}
		if a.Member != b.Member {
			return a.Member < b.Member
		}
		return a.Kind < b.Kind
	})
	return out
}
