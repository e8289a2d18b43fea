// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestKubeFlags: the flag and kubeconfig rules RESTConfig applies before it builds a client.
func TestKubeFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`)
	noCurrent := write("no-current", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: x, context: {cluster: c}}]
`)
	empty := write("empty", "")
	missing := filepath.Join(dir, "missing")
	t.Setenv("KUBECONFIG", missing) // what the cases without --kubeconfig load
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	tests := []struct {
		name    string
		args    []string
		wantErr string // "" = a configuration is returned
	}{
		{"usable", []string{"--kubeconfig", good}, ""},
		{"--context picks one", []string{"--kubeconfig", noCurrent, "--context", "x"}, ""},
		{"no current-context", []string{"--kubeconfig", noCurrent}, "kubeconfig " + noCurrent + ": no usable context"},
		{"empty kubeconfig", []string{"--kubeconfig", empty}, "kubeconfig " + empty + ": no usable context"},
		{"no kubeconfig and not in a pod", nil, "no kubeconfig (" + missing + " not found) and not running in a pod"},
		{"--server needs no context", []string{"--kubeconfig", empty, "--server", "https://127.0.0.1:6443"}, ""},
		{"zero timeout", []string{"--kubeconfig", good, "--timeout", "0s"}, "--timeout 0s: must be positive"},
		{"negative timeout", []string{"--kubeconfig", good, "--timeout", "-5s"}, "--timeout -5s: must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			k := NewKubeFlags(fs, nil)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := k.RESTConfig()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || Code(err) != ExitUsage):
				t.Fatalf("error %v (exit %d), want exit %d and %q", err, Code(err), ExitUsage, tt.wantErr)
			case tt.wantErr == "" && cfg.Timeout != k.Timeout:
				t.Fatalf("timeout %s, want %s", cfg.Timeout, k.Timeout)
			}
		})
	}
}

// TestFellBack: only client-go's built-in default counts as "no usable context"; the in-cluster
// configuration client-go picks in a pod without a kubeconfig (the Service's address) does not.
func TestFellBack(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	k := NewKubeFlags(fs, nil)
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--kubeconfig", empty}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		want bool
	}{
		{clientcmd.ClusterDefaults.Server, true},
		{"https://10.96.0.1:443", false}, // rest.InClusterConfig
	}
	for _, tt := range tests {
		if got := k.fellBack(&rest.Config{Host: tt.host, Timeout: time.Second}); got != tt.want {
			t.Errorf("fellBack(%s) = %v, want %v", tt.host, got, tt.want)
		}
	}
}
