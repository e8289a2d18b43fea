// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package verify implements `credwatch token verify`: the verdict a given kube-apiserver line
// would reach about a token, with the message it would log.
package verify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/keys/fetchflag"
	"github.com/credwatch/credwatch/internal/cmd/token/timeflag"
	"github.com/credwatch/credwatch/internal/cmd/token/tokenarg"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/kubever"
	"github.com/credwatch/credwatch/pkg/report"
	"github.com/credwatch/credwatch/pkg/token"
)

type options struct {
	streams cli.Streams
	output  *cli.OutputFlag
	fetch   *fetchflag.Flags
	now     func() time.Time

	path       string
	jwks       []string
	keyFiles   []string
	issuers    []string
	audiences  []string
	atRaw      string
	versionRaw string
	noLookup   bool

	cfg token.VerifyOptions
}

// NewCommand returns `credwatch token verify`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s, now: time.Now}
	cmd := &cobra.Command{
		Use:   "verify [FILE|-|DIR] --key PEM|--jwks FILE|URL --issuer URL",
		Short: "Say what a given kube-apiserver would decide about a token, and what it would log",
		Long: `Reproduce kube-apiserver's service-account token authentication offline, step by step: the
silent issuer skip (a bare "invalid bearer token"), key selection (by kid since 1.31, every key
before), the signature, the audience, and nbf/exp/iat with the 60-s leeway, plus the legacy-token
claim checks. The result is a verdict (accepted or rejected), a cause ID from the catalogue
(credwatch explain ID), the error text in the spelling of that line, and the log line
kube-apiserver would write. Lookups only a cluster can answer (the service account, the bound
pod/secret/node, a legacy token's Secret) are listed under "needs cluster", not guessed.

--issuer and --key mirror kube-apiserver's --service-account-issuer (first signs, all accepted)
and --service-account-key-file; --audience mirrors --api-audiences (default: the issuers).

Exit status: 0 accepted, 1 rejected, 2 bad input or usage.`,
		Example: `  # would the 1.30 member accept this pod's token?
  credwatch token verify token.jwt --key sa.pub --issuer https://kubernetes.default.svc.cluster.local --kube-version 1.30
  # against the keys a cluster publishes (to service accounts: token is one's), ten minutes from now
  credwatch token verify token.jwt --jwks https://10.0.0.1:6443 --ca-file ca.crt --bearer-token-file token --issuer https://kubernetes.default.svc --at +10m`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(cmd.Context(), args); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&o.jwks, "jwks", nil, "verification keys from a JWKS file, a JWKS URL, or an issuer URL (repeatable)")
	fs.StringArrayVar(&o.keyFiles, "key", nil, "verification keys from a PEM file, public or private, several keys per file (repeatable; like --service-account-key-file)")
	fs.StringArrayVar(&o.issuers, "issuer", nil, "accepted issuer (repeatable; like --service-account-issuer)")
	fs.StringArrayVar(&o.audiences, "audience", nil, "API audience (repeatable; like --api-audiences; default: the issuers)")
	fs.StringVar(&o.atRaw, "at", "", "the validating member's clock: RFC 3339, Unix seconds, or relative (-10m, +1h) (default now)")
	fs.StringVar(&o.versionRaw, "kube-version", kubever.Newest.String(), "kube-apiserver line whose behaviour and spelling to reproduce")
	fs.BoolVar(&o.noLookup, "no-service-account-lookup", false, "the member runs with --service-account-lookup=false (legacy tokens are then not looked up)")
	o.fetch = fetchflag.New(fs)
	o.output = cli.NewOutputFlag(fs)
	return cmd
}

func (o *options) complete(ctx context.Context, args []string) error {
	if err := o.output.Complete(); err != nil {
		return err
	}
	o.path = tokenarg.Path(args)
	v, err := kubever.Parse(o.versionRaw)
	if err != nil {
		return cli.Usagef("--kube-version: %w", err)
	}
	at, err := timeflag.Parse(o.atRaw, o.now())
	if err != nil {
		return cli.Usagef("--at: %w", err)
	}
	if len(o.issuers) == 0 {
		return cli.Usagef("--issuer is required (kube-apiserver's --service-account-issuer; repeat it for each accepted issuer)")
	}
	if len(o.keyFiles) == 0 && len(o.jwks) == 0 {
		return cli.Usagef("--key or --jwks is required (the keys of kube-apiserver's --service-account-key-file)")
	}
	ks, err := keys.LoadPEMFiles(ctx, o.keyFiles...)
	if err != nil {
		return cli.Usagef("--key: %w", err)
	}
	fo, err := o.fetch.Options(ctx)
	if err != nil {
		return cli.Usage(err)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	for _, src := range o.jwks {
		set, err := keys.Load(ctx, src, fo)
		if err != nil {
			return cli.Usagef("--jwks: %w", err)
		}
		for _, n := range set.Notes {
			o.streams.Infof("%s", n)
		}
		if set.Kind == keys.KindPEM {
			return cli.Usagef("--jwks %s: a PEM file; use --key", src)
		}
		ks = append(ks, set.Keys...)
	}
	o.cfg = token.VerifyOptions{Keys: keys.Public(ks), Issuers: o.issuers, APIAudiences: o.audiences, At: at, Version: v, NoLegacyLookup: o.noLookup}
	return nil
}

func (o *options) run(ctx context.Context) error {
	t, name, err := tokenarg.Decode(ctx, o.path, o.streams.In)
	if err != nil {
		return err
	}
	d, err := token.Verify(t, o.cfg)
	if err != nil {
		if errors.Is(err, token.ErrNoIssuer) || errors.Is(err, token.ErrNoKeys) {
			return cli.Usage(err)
		}
		return fmt.Errorf("verify %s: %w", name, err)
	}
	res := newResult(name, t, o.cfg, d)
	if err := report.Print(o.streams.Out, o.output.Format, res); err != nil {
		return err
	}
	if d.Verdict != token.Accepted {
		return cli.Silent(cli.ExitFindings)
	}
	return nil
}
