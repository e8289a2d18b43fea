// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package keystone runs a real Keystone for the lab and the tests: Debian's python3-keystone under
// uwsgi, on 127.0.0.1, with its state (configuration, SQLite database, keys, logs) in one
// directory. start.sh and stop.sh do the work; they are embedded, so that credwatch-cloudlab
// runs them from any directory. The Debian packages come from hack/deps.sh.
package keystone

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/credwatch/credwatch/pkg/redact"
)

var (
	//go:embed start.sh
	startScript []byte
	//go:embed stop.sh
	stopScript []byte
)

// Server is a running Keystone: its endpoint, the administrator's password and the service
// user a cluster is deployed with.
type Server struct {
	URL             string // http://127.0.0.1:PORT/v3
	AdminPassword   string
	ServiceUser     string
	ServiceUserID   string
	ServicePassword string
	ServiceProject  string

	dir string
}

// Start starts a Keystone with its state in dir (created if missing). On failure the error
// carries the end of start.sh's output; a Keystone it started is stopped.
func Start(ctx context.Context, dir string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("keystone: state directory: %w", err)
	}
	// The passwords are chosen here, not by start.sh, so that they are known before anything the
	// script prints: its output goes into the error through redaction.
	s := &Server{dir: dir, AdminPassword: "admin-" + rand.Text(), ServicePassword: "svc-" + rand.Text()}
	known := &redact.Known{}
	known.Add(s.AdminPassword, s.ServicePassword)
	out, err := s.script(ctx, "start.sh", startScript,
		"KEYSTONE_ADMIN_PASSWORD="+s.AdminPassword, "KEYSTONE_SERVICE_PASSWORD="+s.ServicePassword)
	if err != nil {
		_ = s.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("keystone: start (needs python3-keystone and uwsgi-plugin-python3: run hack/deps.sh as root): %w\n%s", err, known.Redact(lastLines(out, 30)))
	}
	env, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		_ = s.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("keystone: %w", err)
	}
	v := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(env))
	for sc.Scan() {
		if k, val, ok := strings.Cut(sc.Text(), "="); ok {
			v[k] = val
		}
	}
	s.URL, s.ServiceUser, s.ServiceUserID, s.ServiceProject = v["KEYSTONE_URL"], v["SERVICE_USER"], v["SERVICE_USER_ID"], v["SERVICE_PROJECT"]
	return s, nil
}

// Stop stops the Keystone (SIGTERM, then SIGKILL after 10 s); its state directory stays.
func (s *Server) Stop(ctx context.Context) error {
	if out, err := s.script(ctx, "stop.sh", stopScript); err != nil {
		return fmt.Errorf("keystone: stop: %w\n%s", err, lastLines(out, 10))
	}
	return nil
}

// script writes the embedded script into the state directory and runs it on that directory.
func (s *Server) script(ctx context.Context, name string, body []byte, env ...string) (string, error) {
	path := filepath.Join(s.dir, name)
	if err := os.WriteFile(path, body, 0o700); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "/bin/bash", path, s.dir)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
