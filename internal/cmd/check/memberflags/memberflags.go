// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package memberflags registers the flags that say which members to ask and with which probe
// account and tokens, shared by `credwatch check` and `credwatch watch`.
package memberflags

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/userfile"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/token"
)

// Flags are the member flags.
type Flags struct {
	endpoints     []string
	probeSA       string
	createProbeSA bool
	tokenFiles    []string
	serverName    string
	known         *redact.Known
}

// New registers the flags on fs; every --token-file token goes to known (Streams.Known), so
// that no output of the run prints it, whatever echoes it.
func New(fs *pflag.FlagSet, known *redact.Known) *Flags {
	f := &Flags{known: known}
	fs.StringArrayVar(&f.endpoints, "endpoint", nil, "a member URL to ask directly, in addition to the discovered ones (repeatable)")
	fs.StringVar(&f.probeSA, "probe-serviceaccount", check.DefaultProbeNamespace+"/"+check.DefaultProbeName, "NAMESPACE/NAME of the service account whose tokens are minted for the trust matrix")
	fs.BoolVar(&f.createProbeSA, "create-probe-sa", false, "create the probe service account (and its namespace) if missing")
	fs.StringArrayVar(&f.tokenFiles, "token-file", nil, "a token to review on every member, e.g. a pod's token (repeatable; never printed)")
	fs.StringVar(&f.serverName, "server-name", check.DefaultServerName, "name members' serving certificates are verified against")
	return f
}

// Inputs are the --token-file files, for cli.OutputNotInput.
func (f *Flags) Inputs() []cli.Path {
	var ps []cli.Path
	for _, p := range f.tokenFiles {
		ps = append(ps, cli.Path{Flag: "--token-file", Path: p})
	}
	return ps
}

// Apply validates the flags, reads the token files and fills the member fields of c. Cancelling
// ctx abandons a token file that blocks (a FIFO).
func (f *Flags) Apply(ctx context.Context, c *check.Config) error {
	ns, name, ok := strings.Cut(f.probeSA, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return cli.Usagef("--probe-serviceaccount %q: want NAMESPACE/NAME", f.probeSA)
	}
	for _, e := range f.endpoints {
		if _, err := check.NormalizeEndpoint(e); err != nil {
			return cli.Usagef("--endpoint: %w", err)
		}
	}
	var tokens []check.NamedToken
	for _, file := range f.tokenFiles {
		b, err := userfile.ReadFile(ctx, file, token.MaxSize)
		if err != nil {
			return cli.Usagef("--token-file %w", err)
		}
		t := strings.TrimSpace(string(b))
		if t == "" {
			return cli.Usagef("--token-file %s: empty", file)
		}
		if f.known != nil {
			f.known.Add(t)
		}
		tokens = append(tokens, check.NamedToken{Name: file, Token: t})
	}
	c.Endpoints, c.ServerName, c.ProbeNamespace, c.ProbeName = f.endpoints, f.serverName, ns, name
	c.CreateProbeSA, c.Tokens = f.createProbeSA, tokens
	return nil
}
