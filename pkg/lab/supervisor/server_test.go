// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package supervisor

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab"
)

// startRoutes serves a Server that has no lab yet (phase starting) on a socket in a temp dir.
func startRoutes(t *testing.T) *Client {
	t.Helper()
	dir, err := os.MkdirTemp("", "sup")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &Server{phase: PhaseStarting, services: map[string]*hosted{}, done: make(chan struct{}), upDone: make(chan struct{})}
	ln, err := net.Listen("unix", SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s.routes()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return NewClient(dir)
}

func TestRoutesBeforeTheLabIsUp(t *testing.T) {
	c := startRoutes(t)
	ctx := context.Background()
	st, err := c.Status(ctx, true)
	if err != nil || st.Phase != PhaseStarting || st.Lab != nil {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	tests := []struct {
		name   string
		call   func() error
		status int
		msg    string
	}{
		{"add member", func() error { _, err := c.AddMember(ctx, lab.MemberOptions{}); return err }, http.StatusConflict, "the lab is starting"},
		{"remove member", func() error { return c.RemoveMember(ctx, "apiserver-1", lab.RemoveOptions{}) }, http.StatusConflict, "the lab is starting"},
		{"roll", func() error { _, err := c.Roll(ctx, lab.MemberOptions{}); return err }, http.StatusConflict, "the lab is starting"},
		{"lb mode", func() error { return c.SetLBMode(ctx, lab.LBAll) }, http.StatusConflict, "the lab is starting"},
		{"service handler", func() error { return c.Do(ctx, http.MethodGet, "/v1/services/tenants/tallies", nil, nil) }, http.StatusNotFound, `service "tenants" is not running`},
		{"unknown path", func() error { return c.Do(ctx, http.MethodGet, "/v1/nope", nil, nil) }, http.StatusNotFound, "HTTP 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var se *Error
			if !errors.As(err, &se) || se.Status != tt.status || !strings.Contains(se.Message, tt.msg) {
				t.Errorf("error = %v, want HTTP %d containing %q", err, tt.status, tt.msg)
			}
		})
	}
}

func TestClientWithoutSupervisor(t *testing.T) {
	_, err := NewClient(filepath.Join(t.TempDir(), "none")).Status(context.Background(), false)
	var se *Error
	if err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), "not reachable") {
		t.Errorf("Status without a supervisor = %v, want a not-reachable error", err)
	}
}
