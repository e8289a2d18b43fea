package check

import (
	"fmt"
	"io"

	"github.com/credwatch/credwatch/pkg/cloud"
	"github.com/credwatch/credwatch/pkg/report"
)

// writeCloud renders the cloud-provider credentials: one row per credential, then how logins
// were made and what could not be read. Nothing when the cloud was not looked at.
func writeCloud(w io.Writer, c *Cloud) error {
	if c == nil {
		return nil
	}
	fmt.Fprintln(w, "\nCLOUD CREDENTIALS")
	if len(c.Items) == 0 {
		fmt.Fprintln(w, "  none found")
	} else {
		tw := report.NewTabWriter(w)
		report.Row(tw, "  PROVIDER", "ACCOUNT", "SOURCE", "VERDICT", "CONSUMERS", "ACTION")
		for _, it := range c.Items {
			verdict := string(it.Test.Verdict)
			if it.Test.Fault != "" {
				verdict += " (" + it.Test.Fault + ")"
			}
			report.Row(tw, "  "+string(it.Provider), it.Account(), it.Source.String(), verdict, cloud.ConsumerList(it.Consumers), it.Action)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if c.Login == noLoginNote {
		fmt.Fprintf(w, "  logins: %s\n", c.Login)
	} else {
		fmt.Fprintf(w, "  logins: %s (%d attempt(s))\n", c.Login, c.LoginAttempts)
	}
	for _, p := range c.Problems {
		fmt.Fprintf(w, "  bad input: %s: %s\n", p.Input, p.Message)
	}
	for _, e := range c.Errors {
		fmt.Fprintf(w, "  partial: %s\n", e)
	}
	return nil
}
