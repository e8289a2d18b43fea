package scenario

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/lab/tenant"
	"github.com/credwatch/credwatch/pkg/token"
)

// skewedClaims are the claims a kube-apiserver puts into a pod-bound token
// (pkg/serviceaccount/claims.go), with times taken from a clock that is off by the skew.
type skewedClaims struct {
	Issuer   string           `json:"iss"`
	Subject  string           `json:"sub"`
	Audience []string         `json:"aud"`
	Expiry   int64            `json:"exp"`
	IssuedAt int64            `json:"iat"`
	ID       string           `json:"jti"`
	Private  kubernetesClaims `json:"kubernetes.io"`
}

type kubernetesClaims struct {
	Namespace      string `json:"namespace"`
	Pod            ref    `json:"pod"`
	ServiceAccount ref    `json:"serviceaccount"`
}

type ref struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

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
// s.Shift would mint for pod: through token.Mint (byte-identical to kube-apiserver) unless the case
// needs claims no kube-apiserver writes (NoNbf).
func signSkewed(key keys.Key, issuer string, pod tenant.Pod, saUID string, s skew, now time.Time) (string, error) {
	if !s.NoNbf {
		return token.Mint(token.MintOptions{
			Key: key, Issuer: issuer, IssuedAt: now.Add(s.Shift), ExpirationSeconds: int64(s.Life / time.Second),
			Namespace: pod.Namespace, ServiceAccount: token.Ref{Name: pod.ServiceAccount, UID: saUID},
			Pod: &token.Ref{Name: pod.Name, UID: string(pod.UID)},
		})
	}
	if key.Private == nil {
		return "", fmt.Errorf("service-account key %s: no private key", key.Source)
	}
	iat := now.Add(s.Shift)
	c := skewedClaims{
		Issuer:   issuer,
		Subject:  "system:serviceaccount:" + pod.Namespace + ":" + pod.ServiceAccount,
		Audience: []string{issuer},
		Expiry:   iat.Add(s.Life).Unix(),
		IssuedAt: iat.Unix(),
		ID:       randomID(),
		Private: kubernetesClaims{
			Namespace:      pod.Namespace,
			Pod:            ref{Name: pod.Name, UID: string(pod.UID)},
			ServiceAccount: ref{Name: pod.ServiceAccount, UID: saUID},
		},
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode claims: %w", err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{
		Algorithm: jose.SignatureAlgorithm(key.Algorithm),
		Key:       jose.JSONWebKey{Key: key.Private, KeyID: key.KeyID},
	}, nil)
	if err != nil {
		return "", fmt.Errorf("signer for %s: %w", key.Source, err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return jws.CompactSerialize()
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// sharedSigner loads the first private key of the lab's shared SA key file.
func sharedSigner(file string) (keys.Key, error) {
	ks, err := keys.LoadPEMFile(file)
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
