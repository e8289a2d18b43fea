// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package token_test

import (
	"io"
	"os"
	"testing"

	"github.com/credwatch/credwatch/internal/cmd/token"
	"github.com/credwatch/credwatch/internal/cmdtest"
	"github.com/credwatch/credwatch/internal/userfile/userfiletest"
)

// TestCancelBlockedRead gives inspect and verify a token source that blocks forever and cancels
// the context as the first SIGINT/SIGTERM does: the command must return with exit 130. The
// deadline is a safety net against a hang, not a claim about speed.
func TestCancelBlockedRead(t *testing.T) {
	fifo := func(t *testing.T, writer bool) string { return userfiletest.FIFO(t, "token", writer) }
	pipe := func(t *testing.T) *os.File { return userfiletest.Pipe(t) }
	verify := []string{"--issuer", iss, "--key", keyDir + "/kubernetes/rsa.pub"}
	tests := []struct {
		name  string
		args  func(t *testing.T) []string
		stdin func(t *testing.T) *os.File
	}{
		{"inspect FIFO, open blocks", func(t *testing.T) []string { return []string{"inspect", fifo(t, false)} }, nil},
		{"inspect FIFO, read blocks", func(t *testing.T) []string { return []string{"inspect", fifo(t, true)} }, nil},
		{"verify FIFO, open blocks", func(t *testing.T) []string { return append([]string{"verify", fifo(t, false)}, verify...) }, nil},
		{"verify FIFO, read blocks", func(t *testing.T) []string { return append([]string{"verify", fifo(t, true)}, verify...) }, nil},
		{"inspect - on a pipe that never closes", func(*testing.T) []string { return []string{"inspect", "-"} }, pipe},
		{"verify - on a pipe that never closes", func(*testing.T) []string { return append([]string{"verify", "-"}, verify...) }, pipe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in io.Reader // a nil *os.File would not be a nil io.Reader
			if tt.stdin != nil {
				in = tt.stdin(t)
			}
			cmdtest.Interrupt(t, token.NewCommand, in, tt.args(t)...)
		})
	}
}
