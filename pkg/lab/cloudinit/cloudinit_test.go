// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudinit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// joinData has the shape of Cluster API v1.8's control-plane join bootstrap data
// (bootstrap/kubeadm/internal/cloudinit/controlplane_join.go, files.go, commands.go).
const joinData = `## template: jinja
#cloud-config

write_files:
-   path: /etc/kubernetes/pki/ca.crt
    owner: root:root
    permissions: '0640'
    content: |
      -----BEGIN CERTIFICATE-----
      MIIB
      -----END CERTIFICATE-----
-   path: /etc/kubernetes/pki/sa.key
    owner: root:root
    permissions: '0600'
    content: |
      -----BEGIN RSA PRIVATE KEY-----
      SECRETSECRET
      -----END RSA PRIVATE KEY-----
-   path: /etc/kubernetes/patches/kubeletconfiguration0+strategic.yaml
    encoding: "base64"
    content: |
      Y2dyb3VwRHJpdmVyOiBjZ3JvdXBmcwo=
-   path: /run/kubeadm/kubeadm-join-config.yaml
    owner: root:root
    permissions: '0640'
    content: |
      ---
      apiVersion: kubeadm.k8s.io/v1beta3
      kind: JoinConfiguration
      nodeRegistration:
        name: '{{ ds.meta_data.local_hostname }}'
        kubeletExtraArgs:
          provider-id: lab://{{ v1.local_hostname }}
-   path: /run/cluster-api/placeholder
    owner: root:root
    permissions: '0640'
    content: "This placeholder file is used to create the /run/cluster-api sub directory"
runcmd:
  - "sysctl -w net.ipv4.ip_forward=1"
  - kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > /run/cluster-api/bootstrap-success.complete
  - [sh, -c, "echo it's done"]
`

func TestParseJoinData(t *testing.T) {
	c, err := Parse([]byte(joinData), map[string]string{"local_hostname": "cp-2"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range c.Files {
		paths = append(paths, f.Path)
	}
	if want := []string{"/etc/kubernetes/pki/ca.crt", "/etc/kubernetes/pki/sa.key", "/etc/kubernetes/patches/kubeletconfiguration0+strategic.yaml",
		"/run/kubeadm/kubeadm-join-config.yaml", "/run/cluster-api/placeholder"}; !slices.Equal(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	want := []string{"sysctl -w net.ipv4.ip_forward=1",
		"kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml  && echo success > " + Sentinel,
		`'sh' '-c' 'echo it'\''s done'`}
	if !slices.Equal(c.Commands, want) {
		t.Errorf("commands %q, want %q", c.Commands, want)
	}
	root := t.TempDir()
	if err := c.WriteFiles(root); err != nil {
		t.Fatal(err)
	}
	join, _ := os.ReadFile(filepath.Join(root, "run/kubeadm/kubeadm-join-config.yaml"))
	if !strings.Contains(string(join), "name: 'cp-2'") || !strings.Contains(string(join), "provider-id: lab://cp-2") {
		t.Errorf("metadata not substituted:\n%s", join)
	}
	patch, _ := os.ReadFile(filepath.Join(root, "etc/kubernetes/patches/kubeletconfiguration0+strategic.yaml"))
	if string(patch) != "cgroupDriver: cgroupfs\n" {
		t.Errorf("base64 file = %q", patch)
	}
	st, err := os.Stat(filepath.Join(root, "etc/kubernetes/pki/sa.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("sa.key mode %v, %v; want 0600", st.Mode(), err)
	}
}

func TestFileData(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("hello"))
	_ = zw.Close()
	tests := []struct {
		f       File
		want    string
		wantErr string
	}{
		{f: File{Content: "plain"}, want: "plain"},
		{f: File{Encoding: "b64", Content: base64.StdEncoding.EncodeToString([]byte("hello"))}, want: "hello"},
		{f: File{Encoding: "gzip+base64", Content: base64.StdEncoding.EncodeToString(gz.Bytes())}, want: "hello"},
		{f: File{Encoding: "gz", Content: gz.String()}, want: "hello"},
		{f: File{Encoding: "base64", Content: "not base64 SECRET"}, wantErr: "encoding base64: content is not base64"},
		{f: File{Encoding: "rot13", Content: "x"}, wantErr: `encoding "rot13": unknown`},
	}
	for _, tt := range tests {
		got, err := tt.f.Data()
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Data(%s) = %v, want %q", tt.f.Encoding, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("Data(%s) = %q, %v; want %q", tt.f.Encoding, got, err, tt.want)
		}
	}
}

// Errors name what is wrong and never quote the document (it holds the cluster's keys).
func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"no header", "write_files: []\n", "does not start with #cloud-config"},
		{"unknown variable", "## template: jinja\n#cloud-config\nruncmd:\n  - echo {{ ds.meta_data.instance_id }}\n", `template variable "instance_id" has no instance metadata`},
		{"relative path", "#cloud-config\nwrite_files:\n- path: etc/x\n  content: SECRET\n", `write_files[0]: path "etc/x" is not a clean absolute path`},
		{"escaping path", "#cloud-config\nwrite_files:\n- path: /etc/../../x\n  content: SECRET\n", "is not a clean absolute path"},
		{"bad mode", "#cloud-config\nwrite_files:\n- path: /x\n  permissions: 'rw'\n  content: SECRET\n", `permissions "rw": want an octal mode`},
		{"bad runcmd", "#cloud-config\nruncmd:\n  - {a: SECRET}\n", "runcmd[0]: want a string or a list of strings"},
		{"not yaml", "#cloud-config\nwrite_files: [\n  SECRET", "cloud-config: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.data), map[string]string{"local_hostname": "cp-1"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error quotes the document: %v", err)
			}
		})
	}
}

// FuzzParse: any document parses or fails with an error, never panics, and never quotes a
// private key it holds.
func FuzzParse(f *testing.F) {
	f.Add([]byte(joinData))
	f.Add([]byte("#cloud-config\nwrite_files:\n- path: /x\n  encoding: gz+b64\n  content: H4sI\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, map[string]string{"local_hostname": "cp-1"})
		if err != nil {
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("error quotes a key: %v", err)
			}
			return
		}
		for _, f := range c.Files {
			if _, err := f.Data(); err != nil {
				t.Errorf("Parse accepted %s but Data fails: %v", f.Path, err)
			}
		}
	})
}
