// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestHostFromPath reads the host and component of each layout logs are collected in.
func TestHostFromPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		layout, path    string
		host, component string
	}{
		// the kubelet's own directories
		{"/var/log/pods", "/var/log/pods/kube-system_kube-apiserver-cp-1_0123/kube-apiserver/0.log", "cp-1", "apiserver"},
		{"/var/log/pods rotated", "bundle/var/log/pods/kube-system_kube-apiserver-cp-1.example.com_0123/kube-apiserver/0.log.20261202-140305.gz", "cp-1", "apiserver"},
		{"/var/log/containers", "/var/log/containers/kube-apiserver-cp-2_kube-system_kube-apiserver-" + strings.Repeat("a", 64) + ".log", "cp-2", "apiserver"},
		// kubectl cluster-info dump --output-directory
		{"cluster-info dump", "dump/kube-system/kube-apiserver-cp-1/logs.txt", "cp-1", "apiserver"},
		{"cluster-info dump, FQDN node", "dump/kube-system/kube-apiserver-ip-10-0-1-2.eu-west-2.compute.internal/logs.txt", "ip-10-0-1-2", "apiserver"},
		{"cluster-info dump, etcd", "kube-system/etcd-cp-3/logs.txt", "cp-3", "etcd"},
		{"cluster-info dump, controller manager", "kube-system/kube-controller-manager-cp-1/logs.txt", "cp-1", "controller-manager"},
		{"cluster-info dump, other pod", "dump/default/web-7d4b9-x2x/logs.txt", "web-7d4b9-x2x", ""},
		// one directory per node
		{"node dir", "node-a/kube-apiserver.log", "node-a", "apiserver"},
		{"node dir, rotated", "bundle/node-b/kube-apiserver.log.1.gz", "node-b", "apiserver"},
		{"node dir, logrotate date", "node-b/kubelet.log-20261202", "node-b", "kubelet"},
		{"node dir, var/log below", "bundle/node-c/var/log/kube-apiserver.log", "node-c", "apiserver"},
		{"node dir, dated folder below", "node-d/2026-12-01/apiserver.log", "node-d", "apiserver"},
		{"node dir, container folder", "node-e/kube-apiserver/0.log", "node-e", "apiserver"},
		{"node dir named by IP", "10.0.1.2/kube-apiserver.log", "10.0.1.2", "apiserver"},
		{"node dir, logs.txt", "node-f/logs.txt", "node-f", ""},
		// crictl logs redirected
		{"crictl, static pod name", "kube-apiserver-cp-1.log", "cp-1", "apiserver"},
		{"crictl, node then component", "cp-2-kube-apiserver.log", "cp-2", "apiserver"},
		{"crictl, node_component", "cp-2_etcd.txt", "cp-2", "etcd"},
		{"crictl, container ID in node dir", "cp-3/3f2a1b4c5d6e7f80.log", "cp-3", ""},
		{"crictl, full container ID in node dir", "cp-3/" + strings.Repeat("ab", 32) + ".log", "cp-3", ""},
		// journalctl -u exports
		{"journalctl, node dir", "node-a/kubelet-journal.txt", "node-a", "kubelet"},
		{"journalctl, unit first", "node-a/journal-kube-apiserver.log", "node-a", "apiserver"},
		{"journalctl, .journal", "cp-1/kube-apiserver.journal", "cp-1", "apiserver"},
		{"journalctl, node in name", "cp-1-kubelet-journal.txt", "cp-1", "kubelet"},
		{"journalctl, nothing but the unit", "kubelet-journal.txt", "kubelet-journal", "kubelet"},
		// named after the member
		{"lab capture", "capture/apiserver-2.log", "apiserver-2", ""},
		{"member name", "seed-000.log", "seed-000", ""},
		{"member name, gzip", "w1-cp-abcde.log.gz", "w1-cp-abcde", ""},
		{"member with a dotted name", "node-a.example.com.log", "node-a.example.com", ""},
		// generic, with no directory that names a host: the name, as before
		{"generic at top", "kube-apiserver.log", "kube-apiserver", "apiserver"},
		{"generic below /var/log", "/var/log/kube-apiserver.log", "kube-apiserver", "apiserver"},
		{"generic logs.txt in kube-system", "kube-system/logs.txt", "logs", ""},
	}
	for _, tt := range tests {
		t.Run(tt.layout, func(t *testing.T) {
			t.Parallel()
			host, comp := hostFromPath(filepath.FromSlash(tt.path))
			if host != tt.host || comp != tt.component {
				t.Errorf("hostFromPath(%q) = %q, %q; want %q, %q", tt.path, host, comp, tt.host, tt.component)
			}
		})
	}
}

func TestSetHosts(t *testing.T) {
	t.Parallel()
	inputs := func() []Input {
		return []Input{{Name: "dump/kube-system/a/logs.txt", Host: "a"}, {Name: "dump/kube-system/b/logs.txt", Host: "b"},
			{Name: "node-c/kubelet.log", Host: "node-c"}, {Name: "-", Host: "stdin"}}
	}
	tests := []struct {
		name      string
		overrides []HostOverride
		bad       []string
		hosts     []string
		given     []bool
		unused    []HostOverride
	}{
		{name: "none", hosts: []string{"a", "b", "node-c", "stdin"}, given: []bool{false, false, false, false}},
		{name: "one file", overrides: []HostOverride{{"dump/kube-system/a/logs.txt", "cp-1"}},
			hosts: []string{"cp-1", "b", "node-c", "stdin"}, given: []bool{true, false, false, false}},
		{name: "unclean path", overrides: []HostOverride{{"./dump//kube-system/b/logs.txt", "cp-2"}},
			hosts: []string{"a", "cp-2", "node-c", "stdin"}, given: []bool{false, true, false, false}},
		{name: "directory, then a file below it wins", overrides: []HostOverride{{"dump/kube-system/a/logs.txt", "cp-1"}, {"dump", "old"}},
			hosts: []string{"cp-1", "old", "node-c", "stdin"}, given: []bool{true, true, false, false}},
		{name: "stdin", overrides: []HostOverride{{"-", "cp-9"}}, hosts: []string{"a", "b", "node-c", "cp-9"}, given: []bool{false, false, false, true}},
		{name: "prefix of a name is not a directory", overrides: []HostOverride{{"node", "x"}},
			hosts: []string{"a", "b", "node-c", "stdin"}, given: []bool{false, false, false, false}, unused: []HostOverride{{"node", "x"}}},
		{name: "an unreadable input is used", overrides: []HostOverride{{"missing.log", "x"}}, bad: []string{"missing.log"},
			hosts: []string{"a", "b", "node-c", "stdin"}, given: []bool{false, false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ins := inputs()
			unused := SetHosts(ins, tt.overrides, tt.bad...)
			var hosts []string
			var given []bool
			for _, in := range ins {
				hosts, given = append(hosts, in.Host), append(given, in.HostGiven)
			}
			if !reflect.DeepEqual(hosts, tt.hosts) || !reflect.DeepEqual(given, tt.given) || !reflect.DeepEqual(unused, tt.unused) {
				t.Errorf("hosts %q given %v unused %v; want %q %v %v", hosts, given, unused, tt.hosts, tt.given, tt.unused)
			}
		})
	}
}

// TestCollapsedHosts analyses layouts and lists the hosts that several logs collapsed into.
func TestCollapsedHosts(t *testing.T) {
	t.Parallel()
	const klog = `E1129 09:00:00.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"` + "\n"
	const journal = `Nov 29 09:00:00 cp-1 kube-apiserver[42]: E1129 09:00:00.000000       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, service account token has expired]"` + "\n"
	tests := []struct {
		name  string
		files map[string]string
		given map[string]string // --host FILE=HOST
		want  []HostCollapse
	}{
		{name: "cluster-info dump", files: map[string]string{
			"kube-system/kube-apiserver-cp-1/logs.txt": klog, "kube-system/kube-apiserver-cp-2/logs.txt": klog}},
		{name: "node directories", files: map[string]string{"node-a/kube-apiserver.log": klog, "node-b/kube-apiserver.log": klog}},
		{name: "rotations and restarts of one log", files: map[string]string{
			"node-a/kube-apiserver.log": klog, "node-a/kube-apiserver.log.1": klog,
			"pods/kube-system_kube-apiserver-cp-1_u/kube-apiserver/0.log": klog, "pods/kube-system_kube-apiserver-cp-1_u/kube-apiserver/1.log": klog}},
		{name: "two logs of one component on one host", files: map[string]string{"cp-1/kube-apiserver.log": klog, "cp-1/apiserver.txt": klog},
			want: []HostCollapse{{Host: "cp-1", Component: "apiserver", Inputs: []string{"cp-1/apiserver.txt", "cp-1/kube-apiserver.log"}}}},
		{name: "generic names in generic folders", files: map[string]string{"logs/a/kube-system/logs.txt": klog, "logs/b/kube-system/logs.txt": klog}},
		{name: "given hosts are meant", files: map[string]string{"cp-1/kube-apiserver.log": klog, "cp-1/apiserver.txt": klog},
			given: map[string]string{"cp-1": "cp-1"}},
		{name: "lines that name their host", files: map[string]string{"x/kube-apiserver.log": journal, "x/apiserver.txt": journal}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, body := range tt.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			files := FileInputs(context.Background(), []string{dir}, nil, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), FileSelect{})
			if len(files.Bad) > 0 {
				t.Fatalf("bad inputs: %+v", files.Bad)
			}
			ins := files.Inputs
			var hs []HostOverride
			for f, h := range tt.given {
				hs = append(hs, HostOverride{Path: filepath.Join(dir, f), Host: h})
			}
			SetHosts(ins, hs)
			r, err := Analyze(context.Background(), Config{Year: 2026}, ins)
			if err != nil {
				t.Fatal(err)
			}
			got := r.CollapsedHosts()
			for i := range got {
				for j, n := range got[i].Inputs {
					rel, _ := filepath.Rel(dir, n)
					got[i].Inputs[j] = filepath.ToSlash(rel)
				}
			}
			if len(got) != len(tt.want) || len(got) > 0 && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CollapsedHosts() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCollapseSummary(t *testing.T) {
	t.Parallel()
	cs := []HostCollapse{{Host: "logs", Inputs: []string{"a/logs.txt", "b/logs.txt", "c/logs.txt", "d/logs.txt"}},
		{Host: "x", Inputs: []string{"x/1.txt", "x/2.txt"}}}
	want := `4 inputs read as one host "logs" (a/logs.txt, b/logs.txt, c/logs.txt and 1 more), and 1 more host like it`
	if got := CollapseSummary(cs); got != want {
		t.Errorf("CollapseSummary:\n got %s\nwant %s", got, want)
	}
	if got := CollapseSummary(nil); got != "" {
		t.Errorf("CollapseSummary(nil) = %q", got)
	}
}
