// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package audit traces service-account token credential ids (KEP-4193: a token's jti, written
// "JTI=<jti>") through kube-apiserver audit logs: the member whose audit log recorded a
// TokenRequest as issuing it (annotation authentication.kubernetes.io/issued-credential-id), the
// members where requests authenticated with it (user.extra
// authentication.kubernetes.io/credential-id), and the 401s its clients got afterwards. A
// rejected request has no user, so its credential id comes from the token itself (credwatch
// token inspect) or from the client.
//
// Reading is streaming: one line at a time, decoding only the lines that carry one of the keys
// or a 401, and holding per traced id a few aggregates; the list of issued ids is bounded
// (Limits). A TokenRequest's status.token, in a RequestResponse-level event, is never decoded.
package audit
