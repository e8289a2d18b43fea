// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package proc

import (
	"context"
	"fmt"
	"time"
)

// WaitUntil calls ok every interval until it returns nil, and fails when the process exits or
// within passes; the error says which, with the last lines of the process's log. what names the
// awaited state ("ready", "healthy").
func (p *Proc) WaitUntil(ctx context.Context, what string, within, every time.Duration, ok func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.Name, err, p.LogFile, Tail(p.LogFile, 25))
		}
		err := ok(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not %s within %s (%v): %w; last lines of %s:\n%s", p.Name, what, within, err, ctx.Err(), p.LogFile, Tail(p.LogFile, 25))
		case <-time.After(every):
		}
	}
}
