// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capi

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab"
)

// A manager whose webhook port is taken is not started: the error says which port and why.
func TestStartManagerWebhookPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	port := ln.Addr().(*net.TCPAddr).Port
	m := &Managers{}
	err = m.startManager(context.Background(), nil, Manager{Name: CoreManager}, port, t.TempDir(), time.Second)
	if err == nil || !strings.Contains(err.Error(), "webhook port") || !strings.Contains(err.Error(), "is taken") {
		t.Fatalf("startManager on a taken port: %v", err)
	}
	if len(m.procs) != 0 {
		t.Errorf("%d processes started", len(m.procs))
	}
}

// The lab's cleanup after a dead supervisor finds the managers by these names.
func TestManagerNamesKnownToTheLab(t *testing.T) {
	if !slices.Equal(ManagerNames(), lab.CAPIManagers) {
		t.Errorf("capi.ManagerNames() = %v, lab.CAPIManagers = %v", ManagerNames(), lab.CAPIManagers)
	}
}
