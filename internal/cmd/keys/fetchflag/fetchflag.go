// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package fetchflag registers the flags that control how key sources at URLs (JWKS, issuer
// discovery) are fetched, shared by `keys diff` and `token verify --jwks URL`.
package fetchflag

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/credwatch/credwatch/internal/userfile"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/token"
)

// Flags are the fetch flags.
type Flags struct {
	Timeout   time.Duration
	CAFile    string
	Insecure  bool
	TokenFile string
	// TokenToJWKSHost sends the token to a jwks_uri on another origin too.
	TokenToJWKSHost bool
}

// New registers the flags on fs.
func New(fs *pflag.FlagSet) *Flags {
	f := &Flags{}
	fs.DurationVar(&f.Timeout, "fetch-timeout", 10*time.Second, "timeout of each HTTP request for a JWKS or discovery URL")
	fs.StringVar(&f.CAFile, "ca-file", "", "PEM CA bundle to trust for https key sources (default: system roots)")
	fs.BoolVar(&f.Insecure, "insecure-skip-tls-verify", false, "do not verify the TLS certificate of https key sources")
	fs.StringVar(&f.TokenFile, "bearer-token-file", "", "send this file's token as Authorization: Bearer to the URL's origin (scheme, host, port) only (kube-apiserver serves discovery to service accounts only, unless RBAC opens it)")
	fs.BoolVar(&f.TokenToJWKSHost, "send-token-to-jwks-host", false, "with --bearer-token-file, also send the token to a discovery document's jwks_uri on another origin")
	return f
}

// Options turns the flags into the library's FetchOptions.
// Cancelling ctx abandons a --bearer-token-file that blocks (a FIFO).
func (f *Flags) Options(ctx context.Context) (keys.FetchOptions, error) {
	o := keys.FetchOptions{Timeout: f.Timeout, CAFile: f.CAFile, Insecure: f.Insecure, TokenToJWKSHost: f.TokenToJWKSHost}
	if f.Timeout <= 0 {
		return o, fmt.Errorf("--fetch-timeout %s: must be positive", f.Timeout)
	}
	if f.TokenToJWKSHost && f.TokenFile == "" {
		return o, fmt.Errorf("--send-token-to-jwks-host needs --bearer-token-file")
	}
	if f.TokenFile != "" {
		b, err := userfile.ReadFile(ctx, f.TokenFile, token.MaxSize)
		if err != nil {
			return o, fmt.Errorf("--bearer-token-file %w", err)
		}
		o.BearerToken = strings.TrimSpace(string(b))
	}
	return o, nil
}
