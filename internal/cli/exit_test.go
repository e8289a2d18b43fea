// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"context"
	"errors"
	"fmt"
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
