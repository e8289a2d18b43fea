// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build unix

package logs

import (
	"io"
	"testing"

	"github.com/credwatch/credwatch/internal/cmdtest"
	"github.com/credwatch/credwatch/internal/userfile/userfiletest"
)

// TestCancelBlockedInput gives logs an input that blocks forever and cancels the context as the
// first SIGINT/SIGTERM does: the command must return with exit 130. The deadline is a safety
// net against a hang, not a claim about speed.
func TestCancelBlockedInput(t *testing.T) {
	fifo := func(t *testing.T, writer bool) string { return userfiletest.FIFO(t, "kube-apiserver.log", writer) }
	tests := []struct {
		name  string
		setup func(t *testing.T) (args []string, stdin io.Reader)
	}{
		{"FIFO, open blocks", func(t *testing.T) ([]string, io.Reader) { return []string{fifo(t, false)}, nil }},
		{"FIFO, read blocks", func(t *testing.T) ([]string, io.Reader) { return []string{fifo(t, true)}, nil }},
		{"FIFO beside a regular file", func(t *testing.T) ([]string, io.Reader) {
			return []string{seedLog, fifo(t, false)}, nil
		}},
		{"stdin pipe that never closes", func(t *testing.T) ([]string, io.Reader) {
			return []string{"-"}, userfiletest.Pipe(t)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, stdin := tt.setup(t)
			cmdtest.Interrupt(t, NewCommand, stdin, append([]string{"-q", "--progress", "never"}, args...)...)
		})
	}
}
