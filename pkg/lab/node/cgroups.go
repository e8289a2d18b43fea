// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package node

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cgroupMounts lists the machine's cgroup hierarchies (v1 controllers, named and the unified
// v2 one) from /proc/self/mountinfo.
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("list cgroup hierarchies: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		mp, fstype, ok := mountFields(sc.Text())
		if ok && (fstype == "cgroup" || fstype == "cgroup2") {
			out = append(out, mp)
		}
	}
	return out, sc.Err()
}

// mountFields returns the mount point and file system type of a mountinfo line.
func mountFields(line string) (mountPoint, fstype string, ok bool) {
	f := strings.Fields(line)
	i := slices.Index(f, "-")
	if len(f) < 5 || i < 0 || i+1 >= len(f) {
		return "", "", false
	}
	return unescapeMount(f[4]), f[i+1], true
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// createCgroups creates root in every hierarchy, copying cpuset.cpus and cpuset.mems from the
// hierarchy's top (a v1 cpuset cgroup takes no task until both are set).
func createCgroups(root string) error {
	hs, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, h := range hs {
		d := filepath.Join(h, root)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", d, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(h, f))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
				return fmt.Errorf("cgroup %s: set %s: %w", d, f, err)
			}
		}
	}
	return nil
}

// cgroupDirs lists root and every cgroup below it in every hierarchy, deepest first.
func cgroupDirs(root string) []string {
	hs, _ := cgroupMounts()
	var out []string
	for _, h := range hs {
		_ = filepath.WalkDir(filepath.Join(h, root), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				out = append(out, p)
			}
			return nil
		})
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return out
}

// cgroupPIDs lists the processes in root or below, in any hierarchy.
func cgroupPIDs(root string) []int {
	var out []int
	for _, d := range cgroupDirs(root) {
		data, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, l := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(l); err == nil && !slices.Contains(out, pid) {
				out = append(out, pid)
			}
		}
	}
	return out
}

// removeCgroups removes root and everything below it, deepest first; it returns the ones left.
func removeCgroups(root string) []string {
	var left []string
	for _, d := range cgroupDirs(root) {
		if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
			left = append(left, d)
		}
	}
	return left
}
