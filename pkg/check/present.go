// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"fmt"

	authv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// causeClientUnauthorized is the catalogue's cause for a 401 seen from the client side: the
// member's reason is only in its own log.
const causeClientUnauthorized = "client-unauthorized"

// present asks member m whether it accepts token by presenting the token itself
// (SelfSubjectReview: 201 accepted, 401 rejected). It stands in for TokenReview when the member
// rejected credwatch's own credentials: in a pod credwatch authenticates with a service-account
// token, and a member whose key or issuer drifted rejects that token like any other, so it cannot
// be asked to review one. The answer is whether the member accepts the probe token; the reason of
// a rejection is only in the member's log.
func present(ctx context.Context, c *Config, mc *memberClient, m *Member, token string) Cell {
	cell := Cell{Member: m.Name}
	cfg := rest.AnonymousClientConfig(mc.cfg)
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		cell.Cause, cell.Message = cellUnreachable, fmt.Sprintf("client presenting the probe token: %v", err)
		return cell
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil:
		cell.Accepted, cell.User = true, r.Status.UserInfo.Username
	case apierrors.IsUnauthorized(err):
		cell.Cause = causeClientUnauthorized
		cell.Message = "the member answered 401 to the probe token itself (it rejects credwatch's own token too, so it could not be asked for a TokenReview); the reason is in its log"
	default:
		cell.Cause, cell.Message = cellUnreachable, fmt.Sprintf("SelfSubjectReview with the probe token: %v", err)
	}
	return cell
}
