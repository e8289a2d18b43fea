// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// AuthLines returns the "Unable to authenticate the request" lines machine's kube-apiserver
// static pod logged (every container restart, oldest first), without the CRI log prefix. The
// machine must have been seen by Roll or ControlPlane while its host ran.
func (c *Lab) AuthLines(machine string) ([]string, error) {
	c.mu.Lock()
	dir, ok := c.podLogs[machine]
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("capi lab: no host seen for machine %s", machine)
	}
	files, err := filepath.Glob(filepath.Join(dir, "kube-system_kube-apiserver-"+machine+"_*", "kube-apiserver", "*.log"))
	if err != nil {
		return nil, fmt.Errorf("capi lab: apiserver logs of %s: %w", machine, err)
	}
	sort.Strings(files)
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
