// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package jwks implements `credwatch keys jwks`: the JWKS document kube-apiserver serves at
// /openid/v1/jwks for a set of keys.
package jwks

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/keys/pemargs"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/report"
)

// NewCommand returns `credwatch keys jwks`.
func NewCommand(s cli.Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "jwks PEM...",
		Short: "Write the JWKS document kube-apiserver would serve at /openid/v1/jwks for these keys",
		Long: `Write the JSON Web Key Set kube-apiserver serves at /openid/v1/jwks when these PEM files are its
--service-account-key-file set: one entry per key, in order, with use "sig", alg and kid, public
material only. With -o json (the default) the output is byte-for-byte that document (compact,
plus a newline), so it can be compared with what a member serves or uploaded to a cloud's
identity federation. It is the one credwatch document without apiVersion/kind.`,
		Example: `  credwatch keys jwks /etc/kubernetes/pki/sa.pub > jwks.json`,
	}
	o := pemargs.Register(cmd, s, run, report.JSON, report.Table, report.YAML)
	o.Output.Raw = string(report.JSON)
	cmd.Flags().Lookup("output").DefValue = string(report.JSON)
	return cmd
}

func run(o *pemargs.Options) error {
	doc, err := keys.JWKS(o.Keys)
	if err != nil {
		return cli.Usage(err)
	}
	switch o.Output.Format {
	case report.JSON:
		_, err := o.Streams.Out.Write(append(doc, '\n'))
		return err
	case report.YAML:
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			return err
		}
		return report.Print(o.Streams.Out, report.YAML, v)
	}
	return report.Print(o.Streams.Out, report.Table, table(o.Keys))
}

type table []keys.Key

func (t table) WriteTable(w io.Writer, _ report.TableOptions) error {
	tw := report.NewTabWriter(w)
	report.Row(tw, "KID", "ALG", "USE", "SOURCE")
	for _, k := range t {
		report.Row(tw, k.KeyID, k.Algorithm, "sig", k.Source)
	}
	return tw.Flush()
}
