// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
	"github.com/credwatch/credwatch/pkg/token"
)

// skew describes one way a token's times can be off.
type skew struct {
	Name   string
	Shift  time.Duration // the minting clock minus the true time
	Life   time.Duration // exp - iat
	NoNbf  bool          // leave nbf out (kube-apiserver always sets it; shows "issued in the future")
	Expect int
}

// skews are the cases clock-skew presents to every member.
var skews = []skew{
	{Name: "token minted by a member 5m ahead", Shift: 5 * time.Minute, Life: time.Hour, Expect: 401},
	{Name: "token minted by a member 30s ahead (inside the 60-s leeway)", Shift: 30 * time.Second, Life: time.Hour, Expect: 201},
	{Name: "1-h token minted by a member 2h behind", Shift: -2 * time.Hour, Life: time.Hour, Expect: 401},
	{Name: "token with iat 5m ahead and no nbf (no kube-apiserver mints this)", Shift: 5 * time.Minute, Life: time.Hour, NoNbf: true, Expect: 401},
}

// signSkewed signs, with key (the lab's shared SA key), the token a member whose clock is off by
// s.Shift would mint for pod, through token.Mint (byte-identical to kube-apiserver; NoNbf leaves
// nbf out, which no kube-apiserver does).
func signSkewed(key keys.Key, issuer string, pod tenant.Pod, saUID string, s skew, now time.Time) (string, error) {
	return token.Mint(token.MintOptions{
		Key: key, Issuer: issuer, IssuedAt: now.Add(s.Shift), ExpirationSeconds: int64(s.Life / time.Second),
		Namespace: pod.Namespace, ServiceAccount: token.Ref{Name: pod.ServiceAccount, UID: saUID},
		Pod: &token.Ref{Name: pod.Name, UID: string(pod.UID)}, OmitNotBefore: s.NoNbf,
	})
}

// sharedSigner loads the first private key of the lab's shared SA key file.
func sharedSigner(file string) (keys.Key, error) {
	ks, err := keys.LoadPEMFile(context.Background(), file)
	if err != nil {
		return keys.Key{}, err
	}
	for _, k := range ks {
		if k.Private != nil {
			return k, nil
		}
	}
	return keys.Key{}, fmt.Errorf("%s: no private key", file)
}
