// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package proc runs the lab's child processes: each in its own process group, killed when its
// parent dies, its output appended to a log file, stopped with SIGTERM and then SIGKILL.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Proc is one child process.
type Proc struct {
	Name    string
	LogFile string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has been reaped
	mu      sync.Mutex
	err     error // exit status once done
}

// Spec describes a process to start.
type Spec struct {
	Name    string
	Bin     string
	Args    []string
	LogFile string               // stdout and stderr are appended to it
	Env     []string             // nil: the caller's environment
	Attr    *syscall.SysProcAttr // extra attributes (namespaces); Setpgid and Pdeathsig are always set
}

// Start starts the process.
func Start(s Spec) (*Proc, error) {
	f, err := os.OpenFile(s.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", s.Name, err)
	}
	attr := &syscall.SysProcAttr{}
	if s.Attr != nil {
		a := *s.Attr
		attr = &a
	}
	attr.Setpgid, attr.Pdeathsig = true, syscall.SIGKILL
	cmd := exec.Command(s.Bin, s.Args...)
	cmd.Stdout, cmd.Stderr, cmd.Env, cmd.SysProcAttr = f, f, s.Env, attr
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s (%s): %w", s.Name, s.Bin, err)
	}
	p := &Proc{Name: s.Name, LogFile: s.LogFile, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		_ = f.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended, and how.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace; it returns once reaped. A
// nil Proc is already stopped.
func (p *Proc) Stop(grace time.Duration) {
	if p == nil {
		return
	}
	if done, _ := p.Exited(); done {
		return
	}
	_ = syscall.Kill(-p.PID(), syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.PID(), syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// StopAll stops procs concurrently.
func StopAll(procs []*Proc, grace time.Duration) {
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop(grace) }()
	}
	wg.Wait()
}

// Tail returns the last n lines of a file (for error messages).
func Tail(file string, n int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// KillPIDs sends SIGKILL to each pid's process group and to the pid itself (used when the owner
// died and left processes it had recorded). It skips pids that are gone.
func KillPIDs(pids []int) {
	for _, pid := range pids {
		if pid <= 1 {
			continue
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
