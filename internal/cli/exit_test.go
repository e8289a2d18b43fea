// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCode maps errors to exit codes by type only.
func TestCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"findings", Silent(ExitFindings), ExitFindings},
		{"usage", Usagef("--x: bad"), ExitUsage},
		{"wrapped usage", fmt.Errorf("run: %w", Usagef("--x: bad")), ExitUsage},
		{"unreachable", Unreachable(errors.New("dial tcp: connection refused")), ExitUnreachable},
		{"deadline", fmt.Errorf("lab down: %w", context.DeadlineExceeded), ExitTimeout},
		{"canceled", fmt.Errorf("lab down: %w", context.Canceled), ExitInterrupted},
		{"unclassified", errors.New("write /dev/stdout: broken pipe"), ExitInternal},
		{"usage-like text is not usage", errors.New(`invalid argument "x" for "--y" flag`), ExitInternal},
	}
	for _, tt := range tests {
		if got := Code(tt.err); got != tt.want {
			t.Errorf("%s: Code(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
}

// TestMessagePlain: the error line has no client-go wording or Go type names, and a server's
// echo does not make it unbounded.
func TestMessagePlain(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"rate limiter", fmt.Errorf("check: %w", errors.New(`Get "https://h:6443/version": client rate limiter Wait returned an error: context deadline exceeded`)),
			`check: Get "https://h:6443/version": timed out before the request could be sent`},
		{"type name", Usage(errors.New("unexpected *url.Error")), "unexpected error"},
		{"silent", Silent(3), ""},
	}
	for _, tt := range tests {
		if got := Message(tt.err); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := Message(errors.New("cluster " + strings.Repeat("x", 100<<10))); len(got) > 2<<10 {
		t.Errorf("a 100 KB echo gives a %d-byte error line", len(got))
	}
}
