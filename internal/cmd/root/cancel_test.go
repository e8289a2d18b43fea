// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package root

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmdtest"
	"github.com/credwatch/credwatch/internal/userfile/userfiletest"
)

// TestCancelBlockedFileFlags points every flag (and argument) that names a file to read at a
// FIFO, and cancels the context as the first SIGINT/SIGTERM does: the command must return, with
// exit 130 (cloud refuses a --config that is not a regular file at once: 2 when it got there
// first). FIFO in args is replaced by the FIFO; each row runs with a FIFO whose open blocks and
// one whose reads block. The 30-s deadline is a safety net against a hang, not a claim about
// speed.
func TestCancelBlockedFileFlags(t *testing.T) {
	const pub = "../../../pkg/keys/testdata/kubernetes/rsa.pub"
	const current = "../../../pkg/preflight/testdata/kcp-issuer-switch/current.yaml"
	interrupted := []int{cli.ExitInterrupted}
	tests := []struct {
		name  string
		args  []string
		codes []int // nil: 130
		dir   bool  // FIFO stands for a directory holding the FIFO as x.yaml
	}{
		{"token verify --key", []string{"token", "verify", "-", "--issuer", "https://i", "--key", "FIFO"}, nil, false},
		{"token verify --jwks", []string{"token", "verify", "-", "--issuer", "https://i", "--jwks", "FIFO"}, nil, false},
		{"token verify --ca-file", []string{"token", "verify", "-", "--issuer", "https://i", "--jwks", "https://127.0.0.1:1/", "--ca-file", "FIFO"}, nil, false},
		{"token verify --bearer-token-file", []string{"token", "verify", "-", "--issuer", "https://i", "--key", pub, "--bearer-token-file", "FIFO"}, nil, false},
		{"token mint --key", []string{"token", "mint", "--out", "-", "--issuer", "https://i", "--key", "FIFO"}, nil, false},
		{"keys id FILE", []string{"keys", "id", "FIFO"}, nil, false},
		{"keys jwks FILE", []string{"keys", "jwks", "FIFO"}, nil, false},
		{"keys diff LEFT", []string{"keys", "diff", "FIFO", pub}, nil, false},
		{"keys diff --bearer-token-file", []string{"keys", "diff", pub, pub, "--bearer-token-file", "FIFO"}, nil, false},
		{"keys diff --ca-file", []string{"keys", "diff", "https://127.0.0.1:1/", pub, "--ca-file", "FIFO"}, nil, false},
		{"check --token-file", []string{"check", "--token-file", "FIFO"}, nil, false},
		{"check --public-issuer-ca", []string{"check", "--public-issuer-ca", "FIFO"}, nil, false},
		{"watch --token-file", []string{"watch", "--token-file", "FIFO"}, nil, false},
		{"preflight --current", []string{"preflight", "--current", "FIFO", "--planned", current}, nil, false},
		{"preflight --planned", []string{"preflight", "--current", current, "--planned", "FIFO"}, nil, false},
		{"preflight --planned DIR", []string{"preflight", "--current", current, "--planned", "FIFO"}, nil, true},
		{"cloud --config", []string{"cloud", "--no-cluster", "--no-host-processes", "--config", "FIFO"}, []int{cli.ExitInterrupted, cli.ExitUsage}, false},
	}
	newCmd := func(s cli.Streams) *cobra.Command { return NewCommand("credwatch", s) }
	for _, tt := range tests {
		for _, writer := range []bool{false, true} {
			name := tt.name + ", open blocks"
			if writer {
				name = tt.name + ", read blocks"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				fifo := userfiletest.FIFO(t, "x.yaml", writer)
				if tt.dir {
					fifo = filepath.Dir(fifo)
				}
				args := slices.Clone(tt.args)
				for i, a := range args {
					if a == "FIFO" {
						args[i] = fifo
					}
				}
				codes := tt.codes
				if codes == nil {
					codes = interrupted
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan cmdtest.Result, 1)
				go func() { done <- cmdtest.RunContext(ctx, t, newCmd, strings.NewReader(""), args...) }()
				time.Sleep(20 * time.Millisecond) // let it block; it passes as well if it has not yet
				cancel()
				select {
				case r := <-done:
					if !slices.Contains(codes, r.Code) {
						t.Errorf("exit %d, want one of %v; stderr %q", r.Code, codes, r.Stderr)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("the command did not return after its context was cancelled")
				}
			})
		}
	}
}
