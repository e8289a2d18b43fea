// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package token_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cmd/token"
	"github.com/credwatch/credwatch/internal/cmdtest"
	"github.com/credwatch/credwatch/internal/userfile/userfiletest"
)

// TestMintOut checks what --out leaves on disk: always a regular file with mode 0600 holding the
// token, never a write through a symbolic link, and no file at all when the token is refused.
func TestMintOut(t *testing.T) {
	mint := func(out string, extra ...string) []string {
		return append([]string{"mint", "--key", keyDir + "/kubernetes/rsa.key", "--issuer", iss, "--out", out}, extra...)
	}
	huge := strings.Repeat("a", 100<<10)
	tests := []struct {
		name   string
		setup  func(t *testing.T, dir string) // prepares dir/t.jwt
		extra  []string
		code   int
		stderr string // in the one error line
		want   string // what t.jwt must be afterwards: "token", "absent", "symlink" (untouched)
		victim string // content dir/victim must keep, when set
	}{
		{name: "new file", want: "token"},
		{name: "existing 0644 file becomes 0600", setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "t.jwt"), "old", 0o644)
		}, want: "token"},
		{name: "existing 0666 file becomes 0600", setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "t.jwt"), "old", 0o666)
		}, want: "token"},
		{name: "symlink is refused, its target untouched", setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "victim"), "keep me", 0o644)
			if err := os.Symlink("victim", filepath.Join(dir, "t.jwt")); err != nil {
				t.Fatal(err)
			}
		}, code: 2, stderr: "is not a regular file", want: "symlink", victim: "keep me"},
		{name: "dangling symlink is refused", setup: func(t *testing.T, dir string) {
			if err := os.Symlink("victim", filepath.Join(dir, "t.jwt")); err != nil {
				t.Fatal(err)
			}
		}, code: 2, stderr: "is not a regular file", want: "symlink"},
		{name: "FIFO is refused", setup: func(t *testing.T, dir string) {
			userfiletest.MkFIFO(t, filepath.Join(dir, "t.jwt"))
		}, code: 2, stderr: "is not a regular file", want: "fifo"},
		{name: "huge audience writes nothing", extra: []string{"--audience", huge}, code: 2,
			stderr: "--audience: the token would be", want: "absent"},
		{name: "huge pod UID writes nothing", extra: []string{"--pod", "web-0:" + huge}, code: 2,
			stderr: "--pod: the token would be", want: "absent"},
		// object names as the API server validates them (DNS-1123 label for a namespace,
		// subdomain for the rest); the error quotes the rule, never the name
		{name: "namespace with a slash", extra: []string{"--namespace", "Bad/NS!"}, code: 2,
			stderr: "--namespace: not a name Kubernetes accepts: a lowercase RFC 1123 label", want: "absent"},
		{name: "dotted namespace", extra: []string{"--namespace", "kube.system"}, code: 2,
			stderr: "--namespace: not a name Kubernetes accepts", want: "absent"},
		{name: "64-character namespace", extra: []string{"--namespace", strings.Repeat("n", 64)}, code: 2,
			stderr: "--namespace: not a name Kubernetes accepts: must be no more than 63 characters", want: "absent"},
		{name: "huge namespace", extra: []string{"--namespace", huge}, code: 2,
			stderr: "--namespace: not a name Kubernetes accepts", want: "absent"},
		{name: "empty namespace", extra: []string{"--namespace", ""}, code: 2,
			stderr: "--namespace: not a name Kubernetes accepts", want: "absent"},
		{name: "-n is --namespace", extra: []string{"-n", "kube.system"}, code: 2,
			stderr: "--namespace: not a name Kubernetes accepts", want: "absent"},
		{name: "-n names the namespace", extra: []string{"-n", "kube-system"}, want: "token"},
		{name: "service account with an underscore", extra: []string{"--serviceaccount", "Bad_SA:uid"}, code: 2,
			stderr: "--serviceaccount: not a name Kubernetes accepts: a lowercase RFC 1123 subdomain", want: "absent"},
		{name: "pod name with a slash", extra: []string{"--pod", "web/0:uid"}, code: 2,
			stderr: "--pod: not a name Kubernetes accepts", want: "absent"},
		{name: "secret name with a space", extra: []string{"--secret", "a b:uid"}, code: 2,
			stderr: "--secret: not a name Kubernetes accepts", want: "absent"},
		{name: "upper-case node name", extra: []string{"--pod", "web-0:uid", "--node", "NODE-A:uid"}, code: 2,
			stderr: "--node: not a name Kubernetes accepts", want: "absent"},
		{name: "legacy secret name", extra: []string{"--legacy", "--secret", "Tok!"}, code: 2,
			stderr: "--secret: not a name Kubernetes accepts", want: "absent"},
		{name: "dotted names are subdomains", extra: []string{"--serviceaccount", "ci.bot:uid", "--pod", "web.0:uid", "--node", "node-a.example:uid"},
			want: "token"},
		{name: "huge claim keeps the old file", setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "t.jwt"), "old", 0o600)
		}, extra: []string{"--issuer", huge}, code: 2, stderr: "--issuer: the token would be", want: "old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "t.jwt")
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			r := cmdtest.Run(t, token.NewCommand, nil, mint(out, tt.extra...)...)
			if r.Code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.Code, tt.code, r.Stderr)
			}
			if tt.code != 0 && (strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, tt.stderr)) {
				t.Fatalf("stderr %q, want one line containing %q", r.Stderr, tt.stderr)
			}
			st, err := os.Lstat(out)
			switch tt.want {
			case "absent":
				if !os.IsNotExist(err) {
					t.Fatalf("%s exists (%v), want no file", out, err)
				}
			case "symlink":
				if err != nil || st.Mode()&os.ModeSymlink == 0 {
					t.Fatalf("%s: %v, want the symbolic link left alone", out, err)
				}
			case "fifo":
				if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
					t.Fatalf("%s: %v, want the FIFO left alone", out, err)
				}
			case "old":
				if b, _ := os.ReadFile(out); string(b) != "old" {
					t.Fatalf("%s holds %q, want the old content", out, b)
				}
			case "token":
				if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
					t.Fatalf("%s: %v mode %v, want a regular file with mode 0600", out, err, st.Mode())
				}
				if b, _ := os.ReadFile(out); strings.Count(string(b), ".") != 2 {
					t.Fatalf("%s holds %q, want a token", out, b)
				}
			}
			if tt.victim != "" {
				if b, _ := os.ReadFile(filepath.Join(dir, "victim")); string(b) != tt.victim {
					t.Errorf("link target holds %q, want %q", b, tt.victim)
				}
			}
			if ents, _ := os.ReadDir(dir); hasTemp(ents) {
				t.Errorf("a temporary file was left in %s: %v", dir, ents)
			}
		})
	}
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func hasTemp(ents []os.DirEntry) bool {
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			return true
		}
	}
	return false
}
