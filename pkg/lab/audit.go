// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"fmt"
	"os"
)

// auditPolicy records every request at Metadata level except the members' own health checks and
// the high-volume leases and events, which say nothing of credentials; TokenRequests at Request
// level, so the audit log names the object a token is bound to (the request holds no token; the
// response, which does, is never logged).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version"]
- level: None
  resources:
  - group: coordination.k8s.io
    resources: ["leases"]
- level: None
  resources:
  - group: ""
    resources: ["events"]
- level: Request
  verbs: ["create"]
  resources:
  - group: ""
    resources: ["serviceaccounts/token"]
- level: Metadata
`

// AuditLog is member name's audit log (Options.Audit), whether or not it exists yet.
func (l *Lab) AuditLog(name string) string { return l.path("logs", name+"-audit.log") }

// auditArgs are the policy file and the log path of member name with Options.Audit; empty
// without.
func (l *Lab) auditArgs(name string) (policy, log string, err error) {
	if !l.o.Audit {
		return "", "", nil
	}
	policy = l.path("audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return "", "", fmt.Errorf("audit policy: %w", err)
	}
	return policy, l.AuditLog(name), nil
}
