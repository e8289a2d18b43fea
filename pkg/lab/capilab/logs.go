// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// notePodLogs remembers where machine's host keeps its pods' logs: the directory stays after the
// LabMachine's deletion stops the host (until lab down), so its apiserver's lines can be read
// after the roll.
func (c *Lab) notePodLogs(machine string) {
	h, ok := c.pool.Get(machine)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.podLogs == nil {
		c.podLogs = map[string]string{}
	}
	if _, seen := c.podLogs[machine]; !seen {
		c.podLogs[machine] = h.Node().PodLogsDir()
	}
}

// APIServerLogs lists the CRI log files of machine's kube-apiserver static pod, sorted, for
// credwatch logs: the files stay after the machine's deletion (see notePodLogs).
func (c *Lab) APIServerLogs(machine string) ([]string, error) {
	return c.apiserverLogs(machine)
}

// apiserverLogs lists the CRI log files of machine's kube-apiserver static pod, sorted: one
// per container run, in a directory per pod (a changed manifest makes a new pod).
func (c *Lab) apiserverLogs(machine string) ([]string, error) {
	return c.staticPodLogs(machine, "kube-apiserver")
}

// staticPodLogs lists the CRI log files of machine's static pod container (kube-apiserver,
// etcd), sorted.
func (c *Lab) staticPodLogs(machine, container string) ([]string, error) {
	c.mu.Lock()
	dir, ok := c.podLogs[machine]
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("capi lab: no host seen for machine %s", machine)
	}
	files, err := filepath.Glob(filepath.Join(dir, "kube-system_"+container+"-"+machine+"_*", container, "*.log"))
	if err != nil {
		return nil, fmt.Errorf("capi lab: %s logs of %s: %w", container, machine, err)
	}
	sort.Strings(files)
	return files, nil
}

// AuthLines returns the "Unable to authenticate the request" lines machine's kube-apiserver
// static pod logged (every container restart, oldest first), without the CRI log prefix. The
// machine must have been seen by Roll or ControlPlane while its host ran.
func (c *Lab) AuthLines(machine string) ([]string, error) {
	files, err := c.apiserverLogs(machine)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return out, fmt.Errorf("capi lab: apiserver log of %s: %w", machine, err)
		}
		out = append(out, authLines(data)...)
	}
	return out, nil
}

// authLines picks the authentication failures out of a CRI log file ("<time> <stream> <tag>
// <line>" per line).
func authLines(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "Unable to authenticate the request") {
			continue
		}
		if f := strings.SplitN(line, " ", 4); len(f) == 4 && (f[1] == "stderr" || f[1] == "stdout") {
			line = f[3]
		}
		out = append(out, line)
	}
	return out
}

// Run is one container run of a machine's kube-apiserver static pod, as its CRI log file shows
// it: the times of its first and last lines. A changed manifest makes a new pod (a new UID), a
// crash a new log file of the same pod.
type Run struct {
	File  string    `json:"file"` // pod UID prefix and log file: 01234567/0.log, then 01234567/1.log after a crash
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// APIServerRuns lists machine's kube-apiserver container runs, oldest first (see AuthLines for
// which machines can be read).
func (c *Lab) APIServerRuns(machine string) ([]Run, error) {
	files, err := c.apiserverLogs(machine)
	if err != nil {
		return nil, err
	}
	var out []Run
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return out, fmt.Errorf("capi lab: apiserver log of %s: %w", machine, err)
		}
		if r, ok := runOf(data); ok {
			r.File = runName(f)
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].First.Before(out[j].First) })
	return out, nil
}

// runName names a CRI log file by its pod's UID (a static pod's changes with its manifest) and
// restart number: ".../kube-system_kube-apiserver-m_0123456789abcdef/kube-apiserver/1.log" is
// "01234567/1.log".
func runName(path string) string {
	pod := filepath.Base(filepath.Dir(filepath.Dir(path)))
	uid := pod[strings.LastIndexByte(pod, '_')+1:]
	if len(uid) > 8 {
		uid = uid[:8]
	}
	return uid + "/" + filepath.Base(path)
}

// runOf reads the first and last timestamps of a CRI log file.
func runOf(data []byte) (Run, bool) {
	var r Run
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		ts, _, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			continue
		}
		if r.First.IsZero() {
			r.First = t
		}
		r.Last = t
	}
	return r, !r.First.IsZero()
}

// podLogDirs are the pod log directories of every host running now and of those noted before
// (notePodLogs), each once, sorted.
func (c *Lab) podLogDirs() []string {
	for _, name := range c.pool.Names() {
		c.notePodLogs(name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, d := range c.podLogs {
		out = append(out, d)
	}
	sort.Strings(out)
	return slices.Compact(out)
}
