// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// buildCLI builds credwatch for the CLI tests (the supervisor is the binary itself).
func buildCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("lab CLI test: skipped under -short")
	}
	if _, ok := labtest.BinDir(); !ok {
		t.Fatal("lab binaries missing: run make lab-binaries")
	}
	cli.once.Do(func() {
		dir, err := os.MkdirTemp("", "credwatch-cli")
		if err != nil {
			cli.err = err
			return
		}
		cli.bin = filepath.Join(dir, "credwatch")
		out, err := exec.Command("go", "build", "-o", cli.bin, "github.com/credwatch/credwatch/cmd/credwatch").CombinedOutput()
		if err != nil {
			cli.err = fmt.Errorf("go build credwatch: %w\n%s", err, out)
		}
	})
	if cli.err != nil {
		t.Fatal(cli.err)
	}
	return cli.bin
}

// cli is the credwatch binary built once for all tests of the package.
var cli struct {
	once sync.Once
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cli.bin != "" {
		_ = os.RemoveAll(filepath.Dir(cli.bin))
	}
	os.Exit(code)
}

func run(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "CREDWATCH_LAB_BIN="+lab.DefaultBinDir())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	t.Logf("credwatch %s -> %d\n%s%s", strings.Join(args, " "), code, errOut.String(), out.String())
	return out.String(), code
}

// labProcesses lists processes whose command line mentions dir.
func labProcesses(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(data), dir) {
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
				continue // a zombie waiting for its parent is not running
			}
			out = append(out, pid)
		}
	}
	return out
}

func waitGone(t *testing.T, dir string) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if len(labProcesses(dir)) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("lab processes left: %v", labProcesses(dir))
}

func TestIntegrationCLIUpStatusDown(t *testing.T) {
	bin := buildCLI(t)
	dir := filepath.Join(t.TempDir(), "lab")
	t.Cleanup(func() { _, _ = lab.KillLeftovers(dir) })

	if _, code := run(t, bin, "lab", "up", "--dir", dir, "--members", "2", "--etcd-members", "1"); code != 0 {
		t.Fatalf("lab up: exit %d", code)
	}
	if _, code := run(t, bin, "lab", "up", "--dir", dir); code != 2 {
		t.Errorf("second lab up in the same dir: exit %d, want 2", code)
	}
	out, code := run(t, bin, "lab", "status", "--dir", dir, "-o", "json")
	var st struct {
		Kind  string     `json:"kind"`
		Phase string     `json:"phase"`
		Lab   lab.Status `json:"lab"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("lab status: exit %d, %q", code, out)
	}
	if st.Kind != "LabStatus" || st.Phase != "ready" || len(st.Lab.Members) != 2 || len(st.Lab.Etcd) != 1 {
		t.Errorf("status: %+v", st)
	}
	for _, m := range st.Lab.Members {
		if !m.Ready || m.KeyID != st.Lab.SharedSAKeyID {
			t.Errorf("member %s: ready %t kid %s (shared %s)", m.Name, m.Ready, m.KeyID, st.Lab.SharedSAKeyID)
		}
	}
	if _, code := run(t, bin, "lab", "remove-member", "--dir", dir, "apiserver-9"); code != 2 {
		t.Errorf("remove-member of an unknown member: exit %d, want 2", code)
	}
	if _, code := run(t, bin, "lab", "add-member", "--dir", dir, "--sa-key", "/nonexistent"); code != 2 {
		t.Errorf("add-member --sa-key /nonexistent: exit %d, want 2", code)
	}
	if _, code := run(t, bin, "lab", "down", "--dir", dir); code != 0 {
		t.Errorf("lab down: exit %d", code)
	}
	waitGone(t, dir)
}

func TestIntegrationCLISupervisorKilled(t *testing.T) {
	bin := buildCLI(t)
	dir := filepath.Join(t.TempDir(), "lab")
	t.Cleanup(func() { _, _ = lab.KillLeftovers(dir) })
	if _, code := run(t, bin, "lab", "up", "--dir", dir, "--members", "1"); code != 0 {
		t.Fatalf("lab up: exit %d", code)
	}
	out, _ := run(t, bin, "lab", "status", "--dir", dir, "-o", "json")
	var st struct {
		PID int `json:"supervisorPID"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.PID <= 1 {
		t.Fatalf("status: %v %q", err, out)
	}
	// The children die with their supervisor (parent-death signal); down cleans up the rest.
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, dir)
	if _, code := run(t, bin, "lab", "status", "--dir", dir); code != 3 {
		t.Errorf("status with a dead supervisor: exit %d, want 3", code)
	}
	if _, code := run(t, bin, "lab", "down", "--dir", dir); code != 0 {
		t.Errorf("lab down with a dead supervisor: exit %d", code)
	}
}
