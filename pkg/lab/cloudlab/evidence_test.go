package cloudlab

import (
	"strings"
	"testing"
)

// Evidence is committed (docs/evidence): a line that carried a token or a password keeps neither,
// even when it is longer than the cut.
func TestNormaliseRedacts(t *testing.T) {
	t.Parallel()
	sig := strings.Repeat("s", 300)
	tok := "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMifQ." + sig
	for _, line := range []string{
		`E1130 12:00:00.000000   123 vsphere.go:45] login with token ` + tok,
		`2026-11-30T12:00:00Z stderr F I1130 12:00:00.000000   1 config.go:9] read cloud config password="Initial-Passw0rd-1"`,
	} {
		got := normalise(line)
		if strings.Contains(got, sig[:40]) || strings.Contains(got, "Initial-Passw0rd-1") {
			t.Errorf("normalise(%.60q…) keeps a secret: %s", line, got)
		}
	}
}
