// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/credwatch/credwatch/pkg/cloud/cloudtest"
)

// cloud starts vcsim in-process (as pkg/cloud's tests do), writes a kubespray-style in-tree
// cloud_config with the account's old password, rotates the password in vcsim, and returns
// `credwatch cloud --no-cluster --config cloud_config`, run in the file's directory, with vcsim's
// port shown as <port>.
func (r *renderer) cloud() (out string, err error) {
	h := &harness{}
	defer h.cleanup()
	defer func() {
		if p := recover(); p != nil {
			if p != errFatal {
				panic(p)
			}
			err = h.err
		}
	}()
	sim := cloudtest.StartVCSim(h, "k8s-vcp@vsphere.local", "Old-pass#1")
	dir, err := r.tempDir()
	if err != nil {
		return "", err
	}
	conf := filepath.Join(dir, "cloud_config")
	body := fmt.Sprintf("[Global]\nuser = \"k8s-vcp@vsphere.local\"\npassword = \"Old-pass#1\"\nport = %s\ninsecure-flag = 1\n\n[VirtualCenter %q]\ndatacenters = DC0\n",
		sim.Port, sim.Host)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		return "", err
	}
	sim.SetPassword("New-pass#2")
	r.replace = []string{sim.Host + ":" + sim.Port, sim.Host + ":<port>", "port " + sim.Port, "port <port>"}
	defer func() { r.replace = nil }()
	return r.runIn(dir, "cloud", "--no-cluster", "--config", "cloud_config")
}

var errFatal = errors.New("fatal")

// harness is the testing.TB cloudtest wants, outside a test: Fatalf stops with an error,
// Cleanup runs at the end, TempDir is a removed directory. Other methods are not used.
type harness struct {
	testing.TB
	cleanups []func()
	dirs     []string
	err      error
}

func (h *harness) Helper()                         {}
func (h *harness) Cleanup(f func())                { h.cleanups = append(h.cleanups, f) }
func (h *harness) Logf(format string, args ...any) {}
func (h *harness) Fatal(args ...any)               { h.err = errors.New(fmt.Sprint(args...)); panic(errFatal) }
func (h *harness) Fatalf(format string, args ...any) {
	h.err = fmt.Errorf(format, args...)
	panic(errFatal)
}

func (h *harness) TempDir() string {
	d, err := os.MkdirTemp("", "runbook-vcsim-")
	if err != nil {
		h.Fatal(err)
	}
	h.dirs = append(h.dirs, d)
	return d
}

func (h *harness) cleanup() {
	for i := len(h.cleanups) - 1; i >= 0; i-- {
		h.cleanups[i]()
	}
	for _, d := range h.dirs {
		_ = os.RemoveAll(d)
	}
}
