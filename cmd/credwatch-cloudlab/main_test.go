// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/lab/cloudlab"
)

// TestBadFlags: a flag that names no era, no directory or a window out of range is exit 2 with
// one line naming it, before anything starts.
func TestBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-era", "nope", "-dir", "/tmp/x"}, `-era "nope"`},
		{[]string{"-era", cloudlab.InTree}, "-dir: required"},
		{[]string{"-dir", "/tmp/x", "-window", "1ms"}, "-window 1ms"},
	} {
		var out, errOut bytes.Buffer
		if code := redacted(c.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) || out.Len() > 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 naming %s", c.args, code, errOut.String(), out.String(), c.want)
		}
	}
}

// TestPasswordsRedacted: whatever the program prints, the lab account's passwords are not in it.
func TestPasswordsRedacted(t *testing.T) {
	var out, errOut bytes.Buffer
	code := redacted([]string{"-era", "in-tree", "-dir", "/tmp/x", "-window", cloudlab.DefaultPassword}, &out, &errOut)
	if code != 2 || strings.Contains(errOut.String(), cloudlab.DefaultPassword) {
		t.Errorf("exit %d, stderr %q: want exit 2 without the password", code, errOut.String())
	}
}
