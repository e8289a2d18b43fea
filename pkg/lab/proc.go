package lab

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is one child process of the lab.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logFile string
	done    chan struct{} // closed when the process has been reaped
	mu      sync.Mutex
	err     error // exit status once done
}

// startProc starts bin with args as a child in its own process group that dies with us, its
// stdout and stderr appended to logFile.
// With netns set, it runs inside that network namespace (through nsenter, which execs bin, so
// the pid is bin's).
func startProc(name, netns, bin string, args []string, logFile string) (*proc, error) {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	if netns != "" {
		cmd = exec.Command("nsenter", append([]string{"--net=" + netns, "--", bin}, args...)...)
	}
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &proc{name: name, cmd: cmd, logFile: logFile, done: make(chan struct{})}
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

func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended, and how.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace; it returns once reaped.
func (p *proc) stop(grace time.Duration) {
	if p == nil {
		return
	}
	if done, _ := p.exited(); done {
		return
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// stopAll stops procs concurrently.
func stopAll(procs []*proc, grace time.Duration) {
	var wg sync.WaitGroup
	for _, p := range procs {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func(p *proc) { defer wg.Done(); p.stop(grace) }(p)
	}
	wg.Wait()
}

// tail returns the last n lines of a file (for error messages).
func tail(file string, n int) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	data = bytes.TrimRight(data, "\n")
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// KillPIDs sends SIGKILL to each pid's process group and to the pid itself (used when a lab's
// supervisor died and left processes recorded in state.json). It skips pids that are gone.
func KillPIDs(pids []int) {
	for _, pid := range pids {
		if pid <= 1 {
			continue
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
