// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package mint implements `credwatch token mint`: sign a token exactly as kube-apiserver (or,
// with --legacy, kube-controller-manager) would, for drills and demos. It writes nothing to any
// cluster.
package mint

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/internal/cmd/token/timeflag"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/report"
	"github.com/credwatch/credwatch/pkg/token"
)

// kube-apiserver's TokenRequest bounds (pkg/apis/authentication/validation).
const (
	minLifetime = 10 * time.Minute
	maxLifetime = (1 << 32) * time.Second
)

type options struct {
	streams cli.Streams
	output  *cli.OutputFlag
	now     func() time.Time

	keyFile, kid      string
	issuer            string
	audiences         []string
	namespace, sa     string
	pod, secret, node string
	lifetime          time.Duration
	iatRaw            string
	extended, legacy  bool
	jti               string
	noJTI, noKID      bool
	out               string

	cfg token.MintOptions

	minted  string       // the signed token, made by validate before any file is created
	decoded *token.Token // minted, decoded as inspect and verify will read it
}

// NewCommand returns `credwatch token mint`.
func NewCommand(s cli.Streams) *cobra.Command {
	o := &options{streams: s, now: time.Now}
	cmd := &cobra.Command{
		Use:   "mint --key PEM --issuer URL --out FILE|-",
		Short: "Sign a token exactly as kube-apiserver does, for drills and demos (writes nothing to a cluster)",
		Long: `Sign a service-account token offline with a private key, laid out exactly as kube-apiserver's
TokenRequest mints it (iss, sub, aud list, iat = nbf, exp, jti, the kubernetes.io claim with
namespace, service account, pod/secret/node and warnafter; header alg and kid), or with --legacy
as kube-controller-manager's tokens controller mints secret-based tokens. Use it to rehearse
failures (a drifted key, an old issuer, clock skew) with token verify, or against a lab.

Nothing is sent to any cluster: the object names and UIDs are whatever you say, though a name
must be one Kubernetes accepts (a DNS-1123 label for --namespace, a subdomain for the others,
or the usage error exit 2), as the API server would look each one up. The token goes
to --out, or "-" for stdout; with a file, stdout shows the inspection of the new token. The file
gets mode 0600 whatever it had: it is written beside the target and renamed over it, and an
existing symbolic link or other non-regular file there is refused, never followed.`,
		Example: `  # a pod-bound token from a drifted key, issued 2 minutes in the future (clock skew drill)
  credwatch token mint --key drift.key --issuer https://kubernetes.default.svc --pod web-0:1b4e... --iat +2m --out t.jwt
  # the admission plugin's 3607-s request, extended to a year
  credwatch token mint --key sa.key --issuer https://kubernetes.default.svc --pod web-0:1b4e... --lifetime 3607s --extended --out -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(cmd.Context()); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			return o.run()
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.keyFile, "key", "", "PEM file with the private signing key (like --service-account-signing-key-file)")
	fs.StringVar(&o.kid, "kid", "", "use the private key with this kid when the file holds several")
	fs.StringVar(&o.issuer, "issuer", "", "issuer: the first --service-account-issuer of the minting member")
	fs.StringArrayVar(&o.audiences, "audience", nil, "audience (repeatable; default: the issuer)")
	fs.StringVarP(&o.namespace, "namespace", "n", "default", "namespace of the service account")
	fs.StringVar(&o.sa, "serviceaccount", "default", "service account as NAME or NAME:UID")
	fs.StringVar(&o.pod, "pod", "", "bind to this pod, NAME:UID")
	fs.StringVar(&o.secret, "secret", "", "bind to this secret, NAME:UID (with --legacy: the Secret holding the token, NAME)")
	fs.StringVar(&o.node, "node", "", "bind to this node, NAME:UID (with --pod: the pod's node, recorded only)")
	fs.DurationVar(&o.lifetime, "lifetime", time.Hour, "spec.expirationSeconds (10m to 2^32s, as TokenRequest validates)")
	fs.StringVar(&o.iatRaw, "iat", "", "issue time, the minting member's clock: RFC 3339, Unix seconds, or relative (-10m, +2m) (default now)")
	fs.StringVar(&o.iatRaw, "at", "", "alias of --iat")
	fs.BoolVar(&o.extended, "extended", false, "apply --service-account-extend-token-expiration: needs --pod and --lifetime 3607s; exp one year, warnafter +3607s")
	fs.BoolVar(&o.legacy, "legacy", false, "mint a legacy secret-based token (iss kubernetes/serviceaccount, no expiry) for --secret NAME")
	fs.StringVar(&o.jti, "jti", "", "jti claim (default: a random UUID, as ServiceAccountTokenJTI does)")
	fs.BoolVar(&o.noJTI, "no-jti", false, "omit jti (tokens from members before ServiceAccountTokenJTI)")
	fs.BoolVar(&o.noKID, "no-kid", false, "omit kid from the header")
	fs.StringVar(&o.out, "out", "", `where to write the token: a file (mode 0600) or "-" for stdout (required)`)
	o.output = cli.NewOutputFlag(fs)
	return cmd
}

func splitRef(flag, v string, needUID bool) (*token.Ref, error) {
	if v == "" {
		return nil, nil
	}
	name, uid, _ := strings.Cut(v, ":")
	if name == "" || (needUID && uid == "") {
		return nil, fmt.Errorf("--%s %q: want NAME:UID", flag, v)
	}
	return &token.Ref{Name: name, UID: uid}, nil
}

// validNames checks object names, keyed by their flag, as the API server validates them: a
// namespace is a DNS-1123 label; a service account, pod, secret and node name a DNS-1123
// subdomain (pkg/apis/core/validation). A token naming what no object can be called would
// fail every lookup kube-apiserver makes. The error quotes Kubernetes' rule, never the name.
func validNames(names map[string]string) error {
	for _, flag := range []string{"namespace", "serviceaccount", "pod", "secret", "node"} {
		name, ok := names[flag]
		if !ok {
			continue
		}
		check := validation.IsDNS1123Subdomain
		if flag == "namespace" {
			check = validation.IsDNS1123Label
		}
		if errs := check(name); len(errs) > 0 {
			return cli.Usagef("--%s: not a name Kubernetes accepts: %s", flag, errs[0])
		}
	}
	return nil
}

func (o *options) complete(ctx context.Context) error {
	if err := o.output.Complete(); err != nil {
		return err
	}
	if o.out == "" {
		return cli.Usagef("--out is required: a file, or - for stdout")
	}
	if o.keyFile == "" {
		return cli.Usagef("--key is required (a PEM private key)")
	}
	if err := cli.OutputNotInput(cli.Path{Flag: "--out", Path: o.out}, cli.Path{Flag: "--key", Path: o.keyFile}); err != nil {
		return err
	}
	ks, err := keys.LoadPEMFile(ctx, o.keyFile)
	if err != nil {
		return cli.Usagef("--key: %w", err)
	}
	signers := keys.Signers(ks)
	if o.kid != "" {
		var match []keys.Key
		for _, k := range signers {
			if k.KeyID == o.kid {
				match = append(match, k)
			}
		}
		signers = match
	}
	if len(signers) == 0 {
		return cli.Usagef("--key %s: no private key%s", o.keyFile, map[bool]string{true: " with kid " + o.kid, false: ""}[o.kid != ""])
	}
	iat, err := timeflag.Parse(o.iatRaw, o.now())
	if err != nil {
		return cli.Usagef("--iat: %w", err)
	}
	if o.lifetime < minLifetime || o.lifetime > maxLifetime || o.lifetime%time.Second != 0 {
		return cli.Usagef("--lifetime %s: TokenRequest accepts whole seconds from 10m to 2^32s", o.lifetime)
	}
	saName, saUID, _ := strings.Cut(o.sa, ":")
	if err := validNames(map[string]string{"namespace": o.namespace, "serviceaccount": saName}); err != nil {
		return err
	}
	c := token.MintOptions{
		Key: signers[0], Issuer: o.issuer, Audiences: o.audiences, IssuedAt: iat,
		ExpirationSeconds: int64(o.lifetime / time.Second), Extend: o.extended,
		Namespace: o.namespace, ServiceAccount: token.Ref{Name: saName, UID: saUID},
		JTI: o.jti, NoJTI: o.noJTI, OmitKeyID: o.noKID, Legacy: o.legacy,
	}
	if o.legacy {
		name, _, _ := strings.Cut(o.secret, ":")
		if name == "" || o.pod != "" || o.node != "" {
			return cli.Usagef("--legacy needs --secret NAME and takes no --pod or --node")
		}
		if err := validNames(map[string]string{"secret": name}); err != nil {
			return err
		}
		c.LegacySecret = name
	} else {
		if o.issuer == "" {
			return cli.Usagef("--issuer is required")
		}
		if c.Pod, err = splitRef("pod", o.pod, true); err != nil {
			return cli.Usage(err)
		}
		if c.Secret, err = splitRef("secret", o.secret, true); err != nil {
			return cli.Usage(err)
		}
		if c.Node, err = splitRef("node", o.node, true); err != nil {
			return cli.Usage(err)
		}
		names := map[string]string{}
		for flag, r := range map[string]*token.Ref{"pod": c.Pod, "secret": c.Secret, "node": c.Node} {
			if r != nil {
				names[flag] = r.Name
			}
		}
		if err := validNames(names); err != nil {
			return err
		}
	}
	o.cfg = c
	return nil
}

// validate signs and decodes the token, so that nothing is written unless the whole token is
// good: a token inspect and verify would refuse (one claim too large) is a usage error naming
// the flag that made it so.
func (o *options) validate() error {
	s, err := token.Mint(o.cfg)
	if err != nil {
		return cli.Usage(err)
	}
	if len(s) > token.MaxSize {
		return cli.Usagef("%s: the token would be %d bytes, more than the %d that token inspect and verify read", o.largestFlag(), len(s), token.MaxSize)
	}
	t, err := token.Decode(s)
	if err != nil {
		return fmt.Errorf("decode minted token: %w", err)
	}
	o.minted, o.decoded = s, t
	return nil
}

// largestFlag names the flag whose value takes the most room in the token.
func (o *options) largestFlag() string {
	flags := []struct {
		name string
		n    int
	}{
		{"--issuer", len(o.issuer)}, {"--audience", len(strings.Join(o.audiences, ""))},
		{"--namespace", len(o.namespace)}, {"--serviceaccount", len(o.sa)}, {"--pod", len(o.pod)},
		{"--secret", len(o.secret)}, {"--node", len(o.node)}, {"--jti", len(o.jti)}, {"--kid", len(o.kid)},
	}
	best := flags[0]
	for _, f := range flags[1:] {
		if f.n > best.n {
			best = f
		}
	}
	return best.name
}

func (o *options) run() error {
	if o.out == "-" {
		_, err := fmt.Fprintln(o.streams.Secret(), o.minted) // the token is what the user asked for
		return err
	}
	if err := token.WriteFile(o.out, []byte(o.minted+"\n")); err != nil {
		return cli.Usagef("--out: %w", err)
	}
	return report.Print(o.streams.Out, o.output.Format, token.Inspect(o.decoded, o.out, o.cfg.IssuedAt))
}
