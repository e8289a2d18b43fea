// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"fmt"
	"io"

	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/report"
)

// writeCloud renders the cloud-provider credentials: one row per credential, then how logins
// were made and what could not be read. Nothing when the cloud was not looked at.
func writeCloud(w io.Writer, c *Cloud, o report.TableOptions) error {
	if c == nil {
		return nil
	}
	fmt.Fprintln(w, "\nCLOUD CREDENTIALS")
	if len(c.Items) == 0 {
		fmt.Fprintln(w, "  none found")
	} else if err := cloud.CredentialGrid("  ", c.Items).Write(w, o); err != nil {
		return err
	}
	login := "logins: " + c.Login
	if c.Login != noLoginNote {
		login += fmt.Sprintf(" (%d attempt(s))", c.LoginAttempts)
	}
	lines := []string{login}
	for _, p := range c.Problems {
		lines = append(lines, "bad input: "+p.Input+": "+p.Message)
	}
	for _, e := range c.Errors {
		lines = append(lines, "partial: "+e)
	}
	for _, l := range lines {
		if err := o.Hang(w, "  ", "      ", l); err != nil {
			return err
		}
	}
	return nil
}
