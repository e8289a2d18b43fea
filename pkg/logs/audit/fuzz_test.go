// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package audit

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/report"
)

// FuzzParseEvent: whatever a line holds, ParseEvent returns an event or an error without
// panicking, and a whole log made of it traces without panicking; a report never holds a
// token-looking value that only appeared in a TokenRequest's status.
func FuzzParseEvent(f *testing.F) {
	for _, p := range []string{"testdata/members/cp-1/audit.log", "testdata/members/cp-2/audit.log", "testdata/members/cp-3/audit.log"} {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(raw, []byte("\n")) {
			f.Add(string(l))
		}
	}
	f.Add(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","user":{"extra":{"authentication.kubernetes.io/credential-id":[]}}}`)
	f.Add(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","requestObject":{"spec":{"expirationSeconds":"x"}}}`)
	f.Add(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[{"kind":"Event","apiVersion":"audit.k8s.io/v1","annotations":{"authentication.kubernetes.io/issued-credential-id":"JTI=x"}}]}`)
	f.Fuzz(func(t *testing.T, line string) {
		ev, err := ParseEvent([]byte(line))
		if err == nil {
			_ = ev.Final()
			_ = ev.Client()
			_ = ev.Code()
		}
		if evs, err := ParseLine([]byte(line)); err == nil && len(evs) == 0 && !strings.Contains(line, "EventList") {
			t.Fatalf("ParseLine(%q): no event and no error", line)
		}
		src := []Source{{Member: "m", Name: "fuzz.log", Open: func() (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader(line + "\n" + line)), nil
		}}}
		for _, ids := range [][]string{nil, {"JTI=" + jti1}} {
			rep, err := Trace(context.Background(), src, ids)
			if err != nil {
				continue
			}
			var b bytes.Buffer
			if err := report.Print(&b, report.JSON, rep); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(line, `"status":{"token":"secret-tok`) && strings.Contains(b.String(), "secret-tok") {
				t.Fatalf("token printed: %s", b.String())
			}
		}
	})
}
