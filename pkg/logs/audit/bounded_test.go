// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package audit

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
)

// events is a reader of n audit events: every one a use of the same credential id by another
// client, and every tenth a TokenRequest issuing a new id.
type events struct {
	n, i int
	buf  []byte
}

func (e *events) Read(p []byte) (int, error) {
	for len(e.buf) == 0 {
		if e.i == e.n {
			return 0, io.EOF
		}
		e.i++
		if e.i%10 == 0 {
			e.buf = fmt.Appendf(nil, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a-%d","stage":"ResponseComplete","verb":"create","user":{"username":"system:node:n"},"objectRef":{"resource":"serviceaccounts","namespace":"ns","name":"sa","subresource":"token"},"responseStatus":{"metadata":{},"code":201},"stageTimestamp":"2026-12-07T13:00:00.000000Z","annotations":{"authentication.kubernetes.io/issued-credential-id":"JTI=id-%d"}}`+"\n", e.i, e.i)
			continue
		}
		e.buf = fmt.Appendf(nil, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a-%d","stage":"ResponseComplete","verb":"get","user":{"username":"u","extra":{"authentication.kubernetes.io/credential-id":["JTI=%s"]}},"sourceIPs":["10.0.%d.%d"],"userAgent":"client-%d","responseStatus":{"metadata":{},"code":200},"stageTimestamp":"2026-12-07T13:00:00.000000Z"}`+"\n", e.i, jti1, e.i/256%256, e.i%256, e.i)
	}
	n := copy(p, e.buf)
	e.buf = e.buf[n:]
	return n, nil
}

// TestTraceBounded: what a trace holds does not grow with the log: a traced id used by 10,000
// clients keeps one aggregate per member and at most maxClientsPerID clients, and the issued
// list stops at Limits.Issued.
func TestTraceBounded(t *testing.T) {
	const n = 10_000
	src := func() []Source {
		return []Source{{Member: "m", Name: "gen.log", Open: func() (io.ReadCloser, error) { return io.NopCloser(&events{n: n}), nil }}}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rep, err := Trace(context.Background(), src(), []string{jti1})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	c := rep.Credentials[0]
	if len(c.Used) != 1 || c.Used[0].Count != n-n/10 || len(c.clients) != maxClientsPerID {
		t.Errorf("used %+v, %d clients", c.Used, len(c.clients))
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4<<20 {
		t.Errorf("the heap grew by %d bytes for a trace of %d events", grew, n)
	}
	rep, err = TraceLimits(context.Background(), src(), nil, Limits{Issued: 100, Clients: 10, MaxLine: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Issued) != 100 || rep.IssuedNotListed != n/10-100 || rep.IssuedPerMember["m"] != n/10 {
		t.Errorf("issued %d listed, %d not, %v", len(rep.Issued), rep.IssuedNotListed, rep.IssuedPerMember)
	}
	runtime.KeepAlive(rep)
}
