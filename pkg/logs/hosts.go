// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// hostFromPath guesses the host and component of a log file's lines that name neither, from the
// layouts logs are collected in:
//
//   - /var/log/pods/<ns>_<pod>_<uid>/<container>/0.log and
//     /var/log/containers/<pod>_<ns>_<container>-<id>.log (the kubelet's);
//   - a file named after its host, with or without its component: <member>.log (lab captures),
//     kube-apiserver-<node>.log (a static pod's name, `crictl logs` or `kubectl logs` redirected),
//     <node>-kubelet.journal (`journalctl -u kubelet` exported);
//   - a file whose name is generic — a component (kube-apiserver.log, kubelet-journal.txt), a
//     container ID (`crictl logs ID > ID.log`), logs.txt, 0.log — takes its host from the nearest
//     directory above it that names one: <ns>/<pod>/logs.txt (`kubectl cluster-info dump
//     --output-directory`: kube-system/kube-apiserver-cp-1/logs.txt → cp-1) and <node>/… (one
//     directory per node: node-a/kube-apiserver.log → node-a, node-a/var/log/kubelet.log →
//     node-a). Directories that name no host (log, var, kube-system, a date) are passed over;
//   - else the file's name without extensions.
//
// Only the path as given is read: a generic file named with no directory keeps its own name.
func hostFromPath(path string) (host, component string) {
	clean := filepath.ToSlash(path)
	parts := strings.Split(clean, "/")
	for i, p := range parts {
		if p == "pods" && i+2 < len(parts) {
			f := strings.Split(parts[i+1], "_")
			if len(f) == 3 {
				c := parts[i+2]
				return hostFromPod(f[1], c), normalizeComponent(c)
			}
		}
		if p == "containers" && i+1 < len(parts) {
			f := strings.Split(strings.TrimSuffix(parts[i+1], ".log"), "_")
			if len(f) == 3 {
				c := f[2]
				if j := strings.LastIndexByte(c, '-'); j > 0 && len(c)-j > 32 {
					c = c[:j]
				}
				return hostFromPod(f[0], c), normalizeComponent(c)
			}
		}
	}
	stem := fileStem(parts[len(parts)-1])
	host, component = hostInName(stem)
	if host != "" {
		return host, component
	}
	for i := len(parts) - 2; i >= 0; i-- {
		h, c := hostInName(parts[i])
		if component == "" {
			component = c
		}
		if h != "" {
			return h, component
		}
	}
	return stem, component
}

// fileStem is a file's base name without compression, rotation and log extensions:
// kube-apiserver.log.1.gz → kube-apiserver.
func fileStem(base string) string {
	s := strings.TrimSuffix(base, ".gz")
	if r := rotation.ReplaceAllString(s, ""); r != s && stemExt(r) != "" {
		s = r // .1, -20261202 or .20261202-140305 after a log's extension
	}
	if ext := stemExt(s); ext != "" {
		s = s[:len(s)-len(ext)]
	}
	return s
}

// stemExt is the log extension name ends in, "" when none does or nothing is left before it.
func stemExt(name string) string {
	for _, ext := range []string{".log", ".txt", ".json", ".jsonl", ".ndjson", ".out", ".journal"} {
		if len(name) > len(ext) && strings.HasSuffix(name, ext) {
			return ext
		}
	}
	return ""
}

// componentWords are the names of components (and the programs that run them) found in file and
// directory names, longest first so that kube-controller-manager is not read as
// controller-manager plus "kube".
var componentWords = []string{
	"cloud-controller-manager", "kube-controller-manager", "controller-manager",
	"kube-apiserver", "kube-scheduler", "containerd", "apiserver", "scheduler",
	"kubelet", "crio", "etcd",
}

// noiseWords name what a file or directory is, not whose: removed from either end of a name.
var noiseWords = map[string]bool{
	"journal": true, "journalctl": true, "log": true, "logs": true, "crictl": true, "container": true,
	"containers": true, "current": true, "previous": true, "output": true, "out": true, "stdout": true,
	"stderr": true, "messages": true, "syslog": true, "audit": true, "pods": true, "var": true,
	"tmp": true, "kube-system": true, "kubernetes": true, "static-pods": true, "dump": true,
	"cluster-info": true, "nodes": true, "": true, ".": true, "..": true,
}

// numbered is a name that is a number or a date (0 of 0.log, 2026-12-01): no host.
var numbered = regexp.MustCompile(`^[0-9][0-9_.:T-]*$`)

// containerID is a container's ID, full or short (`crictl logs ID > ID.log`): no host.
var containerID = regexp.MustCompile(`^[0-9a-f]{12,64}$`)

// hostInName reads a file stem or directory name: the host it names ("" for a generic name) and
// the component it names. kube-apiserver-cp-1 and cp-1-kube-apiserver are cp-1 and apiserver;
// kube-apiserver, kubelet-journal, logs and 0 name no host; apiserver-2 is apiserver-2 (a
// member numbered 2, not a host named 2).
func hostInName(name string) (host, component string) {
	n := strings.ToLower(name)
	if len(n) != len(name) {
		name = n // not ASCII: keep the lower case, whose offsets are n's
	}
	lo, hi := 0, len(n)
	for {
		before := hi - lo
		for _, sep := range "-_." {
			if i := strings.IndexRune(n[lo:hi], sep); i >= 0 && noiseWords[n[lo:lo+i]] {
				lo += i + 1
			}
			if i := strings.LastIndexByte(n[lo:hi], byte(sep)); i >= 0 && noiseWords[n[lo+i+1:hi]] {
				hi = lo + i
			}
		}
		if hi-lo == before {
			break
		}
	}
	n, name = n[lo:hi], name[lo:hi]
	if noiseWords[n] || numbered.MatchString(n) && !isIPv4(n) || containerID.MatchString(n) {
		return "", ""
	}
	for _, c := range componentWords {
		rest := ""
		switch {
		case n == c:
			return "", normalizeComponent(c)
		case len(n) > len(c)+1 && strings.HasPrefix(n, c) && strings.ContainsRune("-_.", rune(n[len(c)])):
			rest = name[len(c)+1:]
		case len(n) > len(c)+1 && strings.HasSuffix(n, c) && strings.ContainsRune("-_.", rune(n[len(n)-len(c)-1])):
			rest = name[:len(n)-len(c)-1]
		default:
			continue
		}
		if numbered.MatchString(rest) && !isIPv4(rest) {
			return name, "" // apiserver-2: a member's number, not a host named 2
		}
		if h, _ := hostInName(rest); h != "" {
			return shortHost(h), normalizeComponent(c)
		}
		return "", normalizeComponent(c)
	}
	return name, ""
}

// HostOverride gives the host of the lines that name none in one input, or in every input below
// a directory (--host FILE=HOST).
type HostOverride struct {
	Path string
	Host string
}

// SetHosts gives each input the host of the most specific override whose Path is the input's
// name or a directory above it (compared cleaned, and absolute when one of them is), and marks it
// given. It returns the overrides that named no input and none of names (the inputs that could
// not be read), in order.
func SetHosts(inputs []Input, overrides []HostOverride, names ...string) (unused []HostOverride) {
	used := make([]bool, len(overrides))
	for i := range inputs {
		best := -1
		for j, o := range overrides {
			if d := pathDepth(o.Path, inputs[i].Name); d >= 0 && (best < 0 || d > pathDepth(overrides[best].Path, inputs[i].Name)) {
				best = j
			}
		}
		if best >= 0 {
			inputs[i].Host, inputs[i].HostGiven = overrides[best].Host, true
			used[best] = true
		}
	}
	for j, o := range overrides {
		for _, n := range names {
			used[j] = used[j] || pathDepth(o.Path, n) >= 0
		}
		if !used[j] {
			unused = append(unused, o)
		}
	}
	return unused
}

// pathDepth is how specific dir is as a path of name: the number of its elements when it is name
// or a directory above it, else -1.
func pathDepth(dir, name string) int {
	if name == "-" || dir == "-" {
		if name == dir {
			return 1
		}
		return -1
	}
	d, n := filepath.Clean(dir), filepath.Clean(name)
	if filepath.IsAbs(d) != filepath.IsAbs(n) {
		var err error
		if d, err = filepath.Abs(d); err != nil {
			return -1
		}
		if n, err = filepath.Abs(n); err != nil {
			return -1
		}
	}
	if d != n && d != "." && !strings.HasPrefix(n, strings.TrimSuffix(d, string(filepath.Separator))+string(filepath.Separator)) {
		return -1
	}
	if d == "." {
		return 0
	}
	return strings.Count(d, string(filepath.Separator)) + 1
}

// HostCollapse is a host whose lines came from several logs that name no host in their lines:
// a host derived from their paths (or from a generic name) that did not tell them apart.
type HostCollapse struct {
	Host      string
	Component string
	Inputs    []string
}

// CollapsedHosts lists, by host, the inputs read whose lines named no host and whose host was not
// given (--host) that share a host and component although they are different logs (not rotations
// of one log, nor the numbered restarts of one container in /var/log/pods).
func (r *Report) CollapsedHosts() []HostCollapse {
	type key struct{ host, component string }
	logs := map[key]map[string]bool{}
	names := map[key][]string{}
	for _, in := range r.Inputs {
		if !in.Read || in.ownHost || in.hostGiven || in.Name == "-" {
			continue
		}
		k := key{in.Host, in.component}
		if logs[k] == nil {
			logs[k] = map[string]bool{}
		}
		logs[k][oneLog(in.Name)] = true
		names[k] = append(names[k], in.Name)
	}
	var out []HostCollapse
	for k, ls := range logs {
		if len(ls) > 1 {
			out = append(out, HostCollapse{Host: k.host, Component: k.component, Inputs: names[k]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Inputs) != len(out[j].Inputs) {
			return len(out[i].Inputs) > len(out[j].Inputs)
		}
		return out[i].Host+"/"+out[i].Component < out[j].Host+"/"+out[j].Component
	})
	return out
}

// oneLog names the log a file is part of: its directory and stem, a number standing for any
// (the kubelet's 0.log, 1.log of one container).
func oneLog(name string) string {
	stem := fileStem(filepath.Base(name))
	if numbered.MatchString(stem) {
		stem = "#"
	}
	return filepath.Join(filepath.Dir(name), stem)
}

// CollapseSummary says in one line which inputs collapsed into one host, for a warning.
func CollapseSummary(cs []HostCollapse) string {
	if len(cs) == 0 {
		return ""
	}
	c := cs[0]
	shown := c.Inputs
	if len(shown) > 3 {
		shown = shown[:3]
	}
	list := strings.Join(shown, ", ")
	if n := len(c.Inputs) - len(shown); n > 0 {
		list += fmt.Sprintf(" and %d more", n)
	}
	s := fmt.Sprintf("%d inputs read as one host %q (%s)", len(c.Inputs), c.Host, list)
	if n := len(cs) - 1; n > 0 {
		s += fmt.Sprintf(", and %d more %s like it", n, plural(n, "host", "hosts"))
	}
	return s
}
