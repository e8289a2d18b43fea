// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package live

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/clusterapi"
	"github.com/credwatch/credwatch/pkg/keys"
	"github.com/credwatch/credwatch/pkg/limits"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// secret gets the Secret <cluster>-<suffix>; nil when it does not exist (absent) or cannot be
// read (noted).
func (r *reader) secret(ctx context.Context, suffix string) (sec *unstructured.Unstructured, absent bool) {
	name := r.c.Name + "-" + suffix
	sec, err := r.c.Client.Resource(clusterapi.SecretResource).Namespace(r.c.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, true
	case err != nil:
		r.note("Secret %s/%s not read: %w", r.c.Namespace, name, err)
		return nil, false
	}
	return sec, false
}

// saSecret is the <cluster>-sa Secret with its public key only: the private key Cluster API
// keeps in it goes no further than this function. nil when the Secret does not exist (KCP would
// generate a new key up to v1.12, block the roll from v1.13 on), which the predictions report;
// absent says the cluster does not have it (rather than that it could not be read).
func (r *reader) saSecret(ctx context.Context) (_ *unstructured.Unstructured, absent bool) {
	sec, absent := r.secret(ctx, "sa")
	if sec == nil {
		return nil, absent
	}
	pub, err := publicPEM(sec)
	if err != nil {
		r.note("Secret %s/%s: %w: its kid is unknown", sec.GetNamespace(), sec.GetName(), err)
	}
	out := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": sec.GetName(), "namespace": sec.GetNamespace()}}}
	if t, ok := sec.Object["type"].(string); ok {
		out.Object["type"] = t
	}
	if pub != nil {
		out.Object["data"] = map[string]any{"tls.crt": base64.StdEncoding.EncodeToString(pub)}
	}
	return out, false
}

// publicPEM is the first key of the Secret's tls.crt or tls.key (the order the offline reader
// takes them in) as a PEM public key; the Secret is read as the API server stores it.
func publicPEM(sec *unstructured.Unstructured) ([]byte, error) {
	data, err := clusterapi.SecretData(sec)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"tls.crt", "tls.key"} {
		if len(data[k]) == 0 {
			continue
		}
		ks, err := keys.ParsePEM(data[k], "data."+k)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKIXPublicKey(ks[0].Public)
		if err != nil {
			return nil, fmt.Errorf("data.%s: %w", k, err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
	}
	return nil, errors.New("no data.tls.crt or data.tls.key")
}

// served reads, through the <cluster>-kubeconfig Secret, what each workload member serves.
// Whatever fails is a note: the prediction then rests on the objects alone.
func (r *reader) served(ctx context.Context) []input.Served {
	sec, _ := r.secret(ctx, "kubeconfig")
	if sec == nil {
		r.note("Secret %s/%s-kubeconfig not found: the workload members' issuer, audiences and JWKS are not read", r.c.Namespace, r.c.Name)
		return nil
	}
	rc, err := clusterapi.KubeconfigREST(sec)
	if err != nil {
		r.note("%w: the workload members are not read", err)
		return nil
	}
	if r.c.Known != nil {
		r.c.Known.Add(rc.BearerToken, rc.Password)
	}
	// As the kubeconfig flags' clients are: bounded answers, from API servers only.
	rc.Timeout, rc.UserAgent = r.c.Timeout, "credwatch"
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return limits.APIOnly(limits.Transport(rt, limits.Response, limits.Metrics))
	})
	snap, err := r.c.Members(ctx, rc)
	if err != nil {
		r.note("workload cluster %s not read: %w", rc.Host, err)
		return nil
	}
	if why := snap.Missing(check.SrcMembers); why != "" {
		r.note("workload members not found: %s", why)
	}
	var out []input.Served
	for _, m := range snap.Members {
		if !m.Reachable {
			r.note("workload member %s (%s) not reached: %s", m.Name, m.URL, m.Error)
			continue
		}
		sv := input.Served{Member: m.Name, Audiences: m.Flags["api-audiences"]}
		if m.Discovery != nil {
			sv.Issuer = m.Discovery.Issuer
		}
		if m.JWKSErr != "" {
			r.note("workload member %s: JWKS not read: %s", m.Name, m.JWKSErr)
		} else {
			sv.KeyIDs = []string{}
			for _, k := range m.JWKS {
				sv.KeyIDs = append(sv.KeyIDs, k.KID)
			}
		}
		out = append(out, sv)
	}
	return out
}
