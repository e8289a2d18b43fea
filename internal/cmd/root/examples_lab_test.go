// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build linux

package root

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/cloud/cloudtest"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
	"github.com/credwatch/credwatch/pkg/lab/supervisor"
)

// TestMain lets this test binary be the lab's supervisor: `lab up` starts its own executable as
// `lab serve`, and in TestIntegrationExamplesRun that is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "lab" && os.Args[2] == "serve" {
		cmd := NewCommand("credwatch", cli.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
		cmd.SetArgs(os.Args[1:])
		err := cmd.ExecuteContext(context.Background())
		if msg := cli.Message(err); msg != "" {
			fmt.Fprintf(os.Stderr, "credwatch: error: %s\n", msg)
		}
		os.Exit(cli.Code(err))
	}
	os.Exit(m.Run())
}

// TestIntegrationExamplesRun runs every example classes() runs on the lab, in the table's order,
// as one session: its first example brings the lab up, KUBECONFIG is the lab's admin
// kubeconfig, the `lab` examples act on that lab, and the files and addresses the others name
// are the lab's (labFiles, labSession.rewrite). Each further `lab up` starts after the lab
// before it is down. Cloud logins go to vcsim.
func TestIntegrationExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	bin, ok := labtest.BinDir()
	if !ok {
		t.Fatal("lab binaries missing: run make lab-binaries")
	}
	t.Setenv("CREDWATCH_LAB_BIN", bin) // found from the repository until the examples leave it
	written := examplesByCmd(t)
	dir := t.TempDir()
	s := &labSession{dir: filepath.Join(dir, "lab"), sim: startVCSim(t)}
	t.Cleanup(func() { s.down(t) })
	t.Chdir(dir)
	t.Setenv("KUBECONFIG", filepath.Join(s.dir, "admin.kubeconfig"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	env := exampleEnv{dir: dir, rewrite: s.rewrite}
	for _, c := range classes() {
		if c.class != runOnLab {
			continue
		}
		up := strings.HasPrefix(c.cmd, "lab up")
		if up {
			s.down(t)
		}
		if !env.run(t, c, written[c.cmd]) && up {
			t.Fatalf("%q did not bring the lab up: the examples after it cannot run", c.cmd)
		}
		if up {
			s.ready(t, dir)
		}
	}
}

// labSession is the lab the examples run on.
type labSession struct {
	dir   string
	sim   *cloudtest.VCSim
	hosts map[string]string // an address the examples name → a member's
}

// labFiles is the one table of the files the lab examples name, made from the lab in labDir:
// member A's key (the lab's shared one), the cluster CA, a service account's token as a pod
// holds it, and kubespray's cloud_config for sim.
func labFiles(labDir, token string, sim *cloudtest.VCSim) map[string]fileFrom {
	return map[string]fileFrom{
		"a/sa.pub":                     copied(filepath.Join(labDir, "sa", "sa.pub")),
		"ca.crt":                       copied(filepath.Join(labDir, "pki", "ca.crt")),
		"token":                        text(token),
		"token.jwt":                    text(token),
		"/etc/kubernetes/cloud_config": vsphereConfig(sim),
	}
}

// rewrite fits an example's arguments to the lab: its directory for the `lab` commands,
// apiserver-N's address for 10.0.0.N:6443, a short --duration for watch (which would run until
// interrupted) and a free port for its --listen.
func (s *labSession) rewrite(args []string) []string {
	out := slices.Clone(args)
	for i := range out {
		for from, to := range s.hosts {
			out[i] = strings.ReplaceAll(out[i], from, to)
		}
	}
	switch out[0] {
	case "lab":
		out = append(out, "--dir", s.dir)
	case "watch":
		out = setFlag(out, "--duration", "6s", true)
		out = setFlag(out, "--listen", "127.0.0.1:0", false)
	}
	return out
}

// setFlag gives flag the value in args, and adds it if add and it is not there.
func setFlag(args []string, flag, value string, add bool) []string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		args[i+1] = value
		return args
	}
	if add {
		args = append(args, flag, value)
	}
	return args
}

// ready reads the lab `lab up` brought up: its members' addresses, and the files the examples
// name, made in dir.
func (s *labSession) ready(t *testing.T, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := supervisor.NewClient(s.dir).Status(ctx, false)
	if err != nil || st.Lab == nil {
		t.Fatalf("lab status: %v", err)
	}
	s.hosts = map[string]string{}
	for i, m := range st.Lab.Members {
		s.hosts[fmt.Sprintf("10.0.0.%d:6443", i+1)] = strings.TrimPrefix(m.URL, "https://")
	}
	makeFiles(t, dir, labFiles(s.dir, labToken(ctx, t, st.Lab.AdminKubeconfig), s.sim))
}

// labToken is a fresh token of the service account default/examples, created if need be.
func labToken(ctx context.Context, t *testing.T, kubeconfig string) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sas := cs.CoreV1().ServiceAccounts("default")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "examples"}}
	if _, err := sas.Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create service account default/examples: %v", err)
	}
	tr, err := sas.CreateToken(ctx, "examples", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of default/examples: %v", err)
	}
	return tr.Status.Token
}

// down takes down the lab in s.dir if one is up, and kills whatever a supervisor that does not
// answer left running.
func (s *labSession) down(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := supervisor.NewClient(s.dir)
	st, err := c.Status(ctx, false)
	if err != nil {
		return // no supervisor: nothing is up
	}
	if _, err := c.Down(ctx); err != nil {
		t.Errorf("lab down: %v", err)
		_ = syscall.Kill(st.PID, syscall.SIGKILL)
	}
	_, _ = lab.KillLeftovers(s.dir)
}
