// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package diff implements `credwatch keys diff`: compare two key sets (PEM, JWKS file or URL,
// issuer discovery) and list the keys in both, only left and only right.
package diff

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/keys/fetchflag"
	"github.com/credwatch/credwatch/internal/cmd/keys/id"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/report"
)

type options struct {
	streams     cli.Streams
	output      *cli.OutputFlag
	fetch       *fetchflag.Flags
	left, right string
}

// NewCommand returns `credwatch keys diff`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s}
	cmd := &cobra.Command{
		Use:   "diff SOURCE SOURCE",
		Short: "Compare two key sets (PEM, JWKS file or URL, issuer URL): in both, only left, only right",
		Long: `Compare two sets of service-account keys by kid and by key material. A SOURCE is a PEM file
(public or private keys), a JWKS file, a JWKS URL (e.g. https://member:6443/openid/v1/jwks), or
an issuer URL whose /.well-known/openid-configuration names the JWKS URL. Keys with the same kid
but different material, or the same material under different kids, are listed separately.

Fetch each member's JWKS directly (not through the load balancer) to detect key drift: a member
whose key is only on one side signs tokens the others reject.

Exit status: 0 the sets hold the same keys, 1 they differ (like diff(1)), 2 bad input (an
unreadable file, a PEM without a key, a URL that times out or returns HTML).`,
		Example: `  # does member B publish the key member A signs with?
  credwatch keys diff a/sa.pub https://10.0.0.2:6443/openid/v1/jwks --ca-file ca.crt --bearer-token-file token`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.left, o.right = args[0], args[1]
			if err := o.output.Complete(); err != nil {
				return err
			}
			return o.run(cmd.Context())
		},
	}
	o.fetch = fetchflag.New(cmd.Flags())
	o.output = cli.NewOutputFlag(cmd.Flags())
	return cmd
}

// Side describes one source.
type Side struct {
	Source string `json:"source"`
	Kind   string `json:"kind"`
	URL    string `json:"url,omitempty"`
	Keys   int    `json:"keys"`
}

// Pair is a left and right key that correspond.
type Pair struct {
	Left  id.KeyInfo `json:"left"`
	Right id.KeyInfo `json:"right"`
}

// KeyDiff is the KeyDiff document (docs/json.md).
type KeyDiff struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Left       Side         `json:"left"`
	Right      Side         `json:"right"`
	Equal      bool         `json:"equal"`
	Both       []id.KeyInfo `json:"both"`
	OnlyLeft   []id.KeyInfo `json:"onlyLeft"`
	OnlyRight  []id.KeyInfo `json:"onlyRight"`
	Conflicts  []Pair       `json:"conflicts,omitempty"`
	Relabeled  []Pair       `json:"relabeled,omitempty"`
}

func (o *options) run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	fo, err := o.fetch.Options(ctx)
	if err != nil {
		return cli.Usage(err)
	}
	l, err := keys.Load(ctx, o.left, fo)
	if err != nil {
		return cli.Usage(err)
	}
	r, err := keys.Load(ctx, o.right, fo)
	if err != nil {
		return cli.Usage(err)
	}
	for _, n := range append(l.Notes, r.Notes...) {
		o.streams.Infof("%s", n)
	}
	d := keys.Compare(keys.Public(l.Keys), keys.Public(r.Keys))
	out := KeyDiff{
		APIVersion: report.APIVersion, Kind: "KeyDiff",
		Left:  Side{Source: l.Source, Kind: l.Kind, URL: l.URL, Keys: len(l.Keys)},
		Right: Side{Source: r.Source, Kind: r.Kind, URL: r.URL, Keys: len(r.Keys)},
		Equal: d.Equal(), Both: id.Describe(d.Both), OnlyLeft: id.Describe(d.OnlyLeft), OnlyRight: id.Describe(d.OnlyRight),
		Conflicts: pairs(d.Conflicts), Relabeled: pairs(d.Relabeled),
	}
	if err := report.Print(o.streams.Out, o.output.Format, out); err != nil {
		return err
	}
	if !out.Equal {
		return cli.Silent(cli.ExitFindings)
	}
	return nil
}

func pairs(ps []keys.KeyPair) []Pair {
	var out []Pair
	for _, p := range ps {
		d := id.Describe([]keys.Key{p.Left, p.Right})
		out = append(out, Pair{Left: d[0], Right: d[1]})
	}
	return out
}

// WriteTable renders the diff for people.
func (k KeyDiff) WriteTable(w io.Writer, _ report.TableOptions) error {
	fmt.Fprintf(w, "left:  %s (%s, %s)\nright: %s (%s, %s)\n\n", sideName(k.Left), k.Left.Kind, nKeys(k.Left.Keys), sideName(k.Right), k.Right.Kind, nKeys(k.Right.Keys))
	tw := report.NewTabWriter(w)
	report.Row(tw, "WHERE", "KID", "ALG", "TYPE")
	for _, x := range k.Both {
		report.Row(tw, "both", x.KeyID, x.Algorithm, x.Type)
	}
	for _, x := range k.OnlyLeft {
		report.Row(tw, "only left", x.KeyID, x.Algorithm, x.Type)
	}
	for _, x := range k.OnlyRight {
		report.Row(tw, "only right", x.KeyID, x.Algorithm, x.Type)
	}
	for _, p := range k.Conflicts {
		report.Row(tw, "CONFLICT", p.Left.KeyID, p.Left.Algorithm+"/"+p.Right.Algorithm, "same kid, different key material")
	}
	for _, p := range k.Relabeled {
		report.Row(tw, "relabeled", p.Left.KeyID+" = "+p.Right.KeyID, p.Left.Algorithm, "same key material, different kid")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if k.Equal {
		fmt.Fprintln(w, "\nThe key sets are the same.")
	} else {
		fmt.Fprintln(w, "\nThe key sets differ: tokens signed with a key on one side only are rejected by members that have the other set (signing-key-unknown).")
	}
	return nil
}

func sideName(s Side) string {
	if s.URL != "" && s.URL != s.Source {
		return s.Source + " -> " + s.URL
	}
	return s.Source
}

func nKeys(n int) string {
	if n == 1 {
		return "1 key"
	}
	return fmt.Sprintf("%d keys", n)
}
