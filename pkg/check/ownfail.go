// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/credwatch/credwatch/pkg/limits"
)

// ReasonOf is the text a fetch records when a source could not be read because of err (see
// Snapshot.Sources): the error's text and, when err carries an API Status whose code is 401 or
// 5xx and whose message does not tell the class (a 503's "apiserver is shutting down", an empty
// one), " (HTTP code)", so that the text alone still says the request was refused or failed.
func ReasonOf(err error) string {
	s := limits.Clean(err).Error()
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return s
	}
	code := st.Status().Code
	if code != 401 && (code < 500 || code > 599) || classifyFailure(s) != failNone {
		return s
	}
	if s = strings.TrimRight(s, ": "); s == "" { // an empty message, wrapped or not
		return fmt.Sprintf("HTTP %d", code)
	}
	return fmt.Sprintf("%s (HTTP %d)", s, code)
}

// failure is how one of credwatch's own requests failed, as the text of its error says: the
// fetch keeps errors as strings (Snapshot.Sources), so the class is read from the text.
type failure string

const (
	failNone        failure = ""
	failRefused     failure = "refused"      // 401
	failTimedOut    failure = "timed-out"    // client, server (504) or etcd timeout
	failServer      failure = "server-error" // 5xx
	failUnreachable failure = "unreachable"  // connection refused, reset, lost
)

// failureOrder is the order the classes are told in.
func failureOrder() []failure {
	return []failure{failRefused, failTimedOut, failServer, failUnreachable}
}

// phrase is what a message says the sources of a class did.
func (f failure) phrase() string {
	switch f {
	case failRefused:
		return "were refused with 401"
	case failTimedOut:
		return "timed out"
	case failServer:
		return "got a server error"
	case failUnreachable:
		return "could not connect"
	}
	return ""
}

// failureSigns are the lower-case texts that tell each class, in the order they are tried on one
// error: a 401 before a timeout ("Internal error occurred: etcdserver: request timed out" is a
// timeout, not a server error), a timeout before a server error. The texts are client-go's and
// kube-apiserver's own (k8s.io/apimachinery pkg/api/errors at v0.36.3, net/http, net).
func failureSigns() []struct {
	class failure
	signs []string
} {
	return []struct {
		class failure
		signs []string
	}{
		{failRefused, []string{
			"unauthorized", // the Status kube-apiserver answers a 401 with
			"the server has asked for the client to provide credentials", // a 401 without a Status
			"not authorized", // NewUnauthorized("")
			"http 401",
		}},
		{failTimedOut, []string{
			"context deadline exceeded",
			"client.timeout exceeded",
			"i/o timeout",
			"tls handshake timeout",
			"etcdserver: request timed out",
			"the server was unable to return a response in the time allotted", // a 504 without a Status
			"timeout: request did not complete within",                        // kube-apiserver's 504
			"could not be completed at this time",                             // NewServerTimeout
			"answered no api call within",                                     // the fetch's stall bound (errStalled)
			"http 504",
		}},
		{failServer, []string{
			"the server is currently unable to handle the request", // a 503 without a Status
			"internal error occurred",                              // NewInternalError
			"an error on the server",                               // any other 5xx without a Status
			"apiserver is shutting down",
			"etcdserver:",
			"http 500", "http 502", "http 503",
		}},
		{failUnreachable, []string{
			"connection refused",
			"connection reset",
			"no route to host",
			"network is unreachable",
			"unexpected eof",
			"client connection lost",
		}},
	}
}

// classifyFailure returns the class of the failure reason tells, or failNone: for a source not
// fetched on purpose (--no-cloud, a read-only fetch), for one refused by authorization (403: that
// is RBAC, check-skipped says it) and for any other error. A reason joining several errors ("; "
// or lines) is classed by the first one that tells a class; an error that says "forbidden" tells
// none.
func classifyFailure(reason string) failure {
	class, _ := classifyParts(reason)
	return class
}

// classifyParts is classifyFailure that also returns the error (one part of reason) that told
// the class.
func classifyParts(reason string) (failure, string) {
	for line := range strings.SplitSeq(reason, "\n") {
		for part := range strings.SplitSeq(line, "; ") {
			low := strings.ToLower(part)
			if strings.Contains(low, "forbidden") {
				continue
			}
			for _, c := range failureSigns() {
				for _, sign := range c.signs {
					if strings.Contains(low, sign) {
						return c.class, strings.TrimSpace(part)
					}
				}
			}
		}
	}
	return failNone, ""
}
