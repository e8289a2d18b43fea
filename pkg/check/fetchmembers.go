// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import "context"

// MembersConfig is a members-only fetch: the members, the trust matrix and the public issuer,
// no pods, service accounts, secrets, leases, nodes or cloud credentials. It serves a caller
// that fetches again and again (credwatch watch) and so wants a lighter fetch than Config's.
type MembersConfig struct {
	Config
	// SkipMetrics leaves out each member's /metrics (the largest document a member serves).
	SkipMetrics bool
	// PriorNames maps a member URL to the name it had before; a member that cannot say its own
	// name (unreachable, no static pod) keeps it instead of becoming host:port.
	PriorNames map[string]string
	// FreshConnections gives this fetch its own connections and closes them at its end, instead
	// of client-go's shared pool: a connection to a member that hung (SIGSTOP) can stay wedged
	// in the pool after the member resumes, until HTTP/2 health checks drop it (about 45 s).
	FreshConnections bool
	// ReadOnly leaves out the trust matrix, and with it every TokenRequest and TokenReview: the
	// fetch only reads (a caller that promises to write nothing, as credwatch preflight does).
	ReadOnly bool
}

// FetchMembers is Fetch narrowed to the members, the trust matrix and the public issuer.
func FetchMembers(ctx context.Context, c MembersConfig) (*Snapshot, error) {
	return fetch(ctx, c.Config, scope{membersOnly: true, skipMetrics: c.SkipMetrics, names: c.PriorNames,
		fresh: c.FreshConnections, noMatrix: c.ReadOnly})
}

// scope is what a fetch reads beyond its Config: all of it for Fetch, less for FetchMembers.
type scope struct {
	membersOnly, skipMetrics, fresh, noMatrix bool
	names                                     map[string]string
}
