// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package inspect implements `credwatch token inspect`: decode a token without trusting it.
package inspect

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/token/timeflag"
	"github.com/credwatch/credwatch/internal/cmd/token/tokenarg"
	"github.com/credwatch/credwatch/pkg/report"
	"github.com/credwatch/credwatch/pkg/token"
)

type options struct {
	streams cli.Streams
	output  *cli.OutputFlag
	now     func() time.Time

	path  string
	atRaw string
	at    time.Time
}

// NewCommand returns `credwatch token inspect`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s, now: time.Now}
	cmd := &cobra.Command{
		Use:   "inspect [FILE|-|DIR]",
		Short: "Decode a token without trusting it: type, binding, times, kubelet refresh",
		Long: `Decode a token without verifying it and say what it is: bound to a pod, secret or node (name
and UID), a legacy secret-based token, or not a service-account token (an OIDC ID token, say).
Times are shown in UTC and relative to now (or --at). For pod-bound tokens it shows when the
kubelet refreshes them (80% of the lifetime it requested, or 24h, whichever is first) and, for
the extended 3607-s case, when use becomes "stale". The signature is never printed.

The token is read from FILE, from stdin ("-", the default), or from DIR/token when DIR is a
mounted service-account volume such as /var/run/secrets/kubernetes.io/serviceaccount.`,
		Example: `  # the token of the pod you are in
  credwatch token inspect /var/run/secrets/kubernetes.io/serviceaccount
  # a token from kubectl, as JSON
  kubectl create token default | credwatch token inspect - -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&o.atRaw, "at", "", "reference time for relative times and refresh maths: RFC 3339, Unix seconds, or relative (-10m) (default now)")
	o.output = cli.NewOutputFlag(cmd.Flags())
	return cmd
}

func (o *options) complete(args []string) error {
	o.path = tokenarg.Path(args)
	at, err := timeflag.Parse(o.atRaw, o.now())
	if err != nil {
		return cli.Usagef("--at: %w", err)
	}
	o.at = at
	return o.output.Complete()
}

func (o *options) run(ctx context.Context) error {
	t, name, err := tokenarg.Decode(ctx, o.path, o.streams.In)
	if err != nil {
		return err
	}
	return report.Print(o.streams.Out, o.output.Format, token.Inspect(t, name, o.at))
}
