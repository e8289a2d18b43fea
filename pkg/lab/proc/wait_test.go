// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package proc

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWaitUntil(t *testing.T) {
	start := func(t *testing.T, script string) *Proc {
		t.Helper()
		p, err := Start(Spec{Name: "sh", Bin: "/bin/sh", Args: []string{"-c", script}, LogFile: filepath.Join(t.TempDir(), "p.log")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Stop(time.Second) })
		return p
	}
	notYet := errors.New("not yet")
	tests := []struct {
		name    string
		script  string
		okAfter int // calls until ok returns nil; 0: never
		want    string
	}{
		{name: "ready on the third call", script: "exec sleep 30", okAfter: 3},
		{name: "exits first", script: "echo bye; exit 3", want: "sh exited (exit status 3); last lines of"},
		{name: "never ready", script: "echo waiting; exec sleep 30", want: "sh not ready within 300ms (not yet)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := start(t, tt.script)
			if tt.okAfter == 0 {
				time.Sleep(100 * time.Millisecond) // let the exiting one exit
			}
			calls := 0
			err := p.WaitUntil(context.Background(), "ready", 300*time.Millisecond, 20*time.Millisecond, func(context.Context) error {
				calls++
				if tt.okAfter > 0 && calls >= tt.okAfter {
					return nil
				}
				return notYet
			})
			if tt.want == "" {
				if err != nil || calls != tt.okAfter {
					t.Fatalf("WaitUntil = %v after %d calls, want nil after %d", err, calls, tt.okAfter)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("WaitUntil = %v, want %q", err, tt.want)
			}
		})
	}
}
