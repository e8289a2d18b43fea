// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package id implements `credwatch keys id`: the kid kube-apiserver derives for each key.
package id

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/keys/pemargs"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/report"
)

// NewCommand returns `credwatch keys id`.
func NewCommand(s cli.Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "id PEM...",
		Short: "Print the kid kube-apiserver derives for each key (public or private PEM, RSA or ECDSA)",
		Long: `Print, for every RSA or ECDSA key in the PEM files (public or private, several per file), the
key ID kube-apiserver derives: the unpadded base64url SHA-256 of the key's PKIX DER encoding. It
is the kid in the header of every token that member signs and in its /openid/v1/jwks. Compare
it with a failing token's kid (credwatch token inspect) to find which member signed it.`,
		Example: `  # the kid of every control-plane node's key
  credwatch keys id /etc/kubernetes/pki/sa.pub`,
	}
	pemargs.Register(cmd, s, run)
	return cmd
}

// KeyInfo describes one key (docs/json.md, KeyList).
type KeyInfo struct {
	Source    string `json:"source"`
	Index     int    `json:"index"`
	KeyID     string `json:"kid"`
	Algorithm string `json:"alg"`
	Type      string `json:"type"`
	Private   bool   `json:"private"`
}

// KeyList is the KeyList document.
type KeyList struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Keys       []KeyInfo `json:"keys"`
}

// Describe turns loaded keys into KeyInfo rows (shared with keys diff).
func Describe(ks []keys.Key) []KeyInfo {
	out := make([]KeyInfo, 0, len(ks))
	idx := map[string]int{}
	for _, k := range ks {
		out = append(out, KeyInfo{Source: k.Source, Index: idx[k.Source], KeyID: k.KeyID, Algorithm: k.Algorithm, Type: keyType(k), Private: k.Private != nil})
		idx[k.Source]++
	}
	return out
}

func keyType(k keys.Key) string {
	switch p := k.Public.(type) {
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA-%d", p.N.BitLen())
	case *ecdsa.PublicKey:
		return "EC-" + p.Curve.Params().Name
	}
	return fmt.Sprintf("%T", k.Public)
}

func run(o *pemargs.Options) error {
	return report.Print(o.Streams.Out, o.Output.Format, KeyList{APIVersion: report.APIVersion, Kind: "KeyList", Keys: Describe(o.Keys)})
}

// WriteTable renders the list for people.
func (l KeyList) WriteTable(w io.Writer, _ report.TableOptions) error {
	tw := report.NewTabWriter(w)
	report.Row(tw, "KID", "ALG", "TYPE", "PRIVATE", "SOURCE")
	for _, k := range l.Keys {
		priv := "no"
		if k.Private {
			priv = "yes"
		}
		report.Row(tw, k.KeyID, k.Algorithm, k.Type, priv, fmt.Sprintf("%s#%d", k.Source, k.Index))
	}
	return tw.Flush()
}
