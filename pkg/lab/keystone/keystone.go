// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package keystone runs a real Keystone for the lab and the tests: Debian's python3-keystone under
// uwsgi, on 127.0.0.1, with its state (configuration, SQLite database, keys, logs) in one
// directory. start.sh prepares and populates it (embedded, so that credwatch-cloudlab runs it from
// any directory); uwsgi is this process's child (package proc: its own process group, killed when
// its parent dies), so no Keystone outlives the test or lab that started it. The Debian packages
// come from hack/deps.sh.
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
	"time"

	"github.com/credwatch/credwatch/pkg/lab/proc"
	"github.com/credwatch/credwatch/pkg/redact"
)

//go:embed start.sh
var startScript []byte

// stopGrace is how long uwsgi gets between SIGTERM and SIGKILL.
const stopGrace = 10 * time.Second

// Server is a running Keystone: its endpoint, the administrator's password and the service
// user a cluster is deployed with.
type Server struct {
	URL             string // http://127.0.0.1:PORT/v3
	AdminPassword   string
	ServiceUser     string
	ServiceUserID   string
	ServicePassword string
	ServiceProject  string

	dir  string
	proc *proc.Proc
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
	pw := []string{"KEYSTONE_ADMIN_PASSWORD=" + s.AdminPassword, "KEYSTONE_SERVICE_PASSWORD=" + s.ServicePassword}
	out, err := s.script(ctx, "setup", pw...)
	if err == nil {
		err = s.serve()
	}
	if err == nil {
		out, err = s.script(ctx, "accounts", pw...)
	}
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

// serve starts uwsgi with the command line start.sh's setup wrote.
func (s *Server) serve() error {
	data, err := os.ReadFile(filepath.Join(s.dir, "uwsgi.argv"))
	if err != nil {
		return fmt.Errorf("read uwsgi's command line: %w", err)
	}
	argv := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	p, err := proc.Start(proc.Spec{Name: "keystone", Bin: argv[0], Args: argv[1:], LogFile: filepath.Join(s.dir, "log", "uwsgi.out"),
		Env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "OS_KEYSTONE_CONFIG_FILES=" + filepath.Join(s.dir, "keystone.conf")}})
	if err != nil {
		return err
	}
	s.proc = p
	return nil
}

// PID is uwsgi's master process id (0 before it started).
func (s *Server) PID() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

// Stop stops the Keystone (SIGTERM, then SIGKILL after 10 s); its state directory stays.
func (s *Server) Stop(context.Context) error {
	s.proc.Stop(stopGrace)
	return nil
}

// script writes the embedded start.sh into the state directory and runs one phase of it.
func (s *Server) script(ctx context.Context, phase string, env ...string) (string, error) {
	path := filepath.Join(s.dir, "start.sh")
	if err := os.WriteFile(path, startScript, 0o700); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "/bin/bash", path, s.dir, phase)
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
