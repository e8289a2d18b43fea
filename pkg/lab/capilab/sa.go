// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
)

// saSecret is the Secret in which KubeadmControlPlane keeps the workload cluster's service-account
// signing key pair (tls.crt: the public key, tls.key: the private key). It generates it once and
// copies it to every machine it joins; if the Secret is gone, its next reconcile generates a new
// pair (certificates.LookupOrGenerate).
func (c *Lab) saSecret() string { return c.cfg.Cluster.Name + "-sa" }

// SAKey is a fingerprint of the public key in the <cluster>-sa Secret ("sha256:" and 12 hex
// digits of its PEM), or "" when the Secret does not exist. The private key is never read out.
func (c *Lab) SAKey(ctx context.Context) (string, error) {
	s, err := c.dyn.Resource(controller.Secrets).Namespace(namespace(c.cfg.Cluster)).Get(ctx, c.saSecret(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("capi lab: read Secret %s: %w", c.saSecret(), err)
	}
	v, _, _ := unstructured.NestedString(s.Object, "data", "tls.crt")
	pub, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(pub) == 0 {
		return "", fmt.Errorf("capi lab: Secret %s has no public key in tls.crt", c.saSecret())
	}
	sum := sha256.Sum256(pub)
	return "sha256:" + hex.EncodeToString(sum[:6]), nil
}

// DeleteSASecret deletes the <cluster>-sa Secret, as an operator cleaning up "unused" Secrets
// might: the machines keep their copy of the old key, and the next machine KubeadmControlPlane
// joins gets a new one.
func (c *Lab) DeleteSASecret(ctx context.Context) error {
	err := c.dyn.Resource(controller.Secrets).Namespace(namespace(c.cfg.Cluster)).Delete(ctx, c.saSecret(), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("capi lab: delete Secret %s: %w", c.saSecret(), err)
	}
	fmt.Fprintf(c.cfg.Log, "capi lab: deleted Secret %s/%s\n", namespace(c.cfg.Cluster), c.saSecret())
	return nil
}
