// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// The metrics server closes connections that send nothing and keep-alive connections left idle.
// The timeouts are short and injected; the only bound asserted is a generous deadline for "closed
// at all" (an open connection would hold the read until it).
func TestMetricsServerClosesIdleConnections(t *testing.T) {
	t.Parallel()
	short := 50 * time.Millisecond
	srv := newMetricsServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }),
		serverTimeouts{readHeader: short, read: short, write: time.Minute, idle: short})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	for _, tt := range []struct {
		name string
		send string // what the client writes before it goes quiet
	}{
		{"silent", ""},
		{"half a request", "GET /healthz HTTP/1.1\r\nHost: x\r\n"},
		{"idle keep-alive", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			if err := c.SetReadDeadline(time.Now().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(c)
			if strings.HasSuffix(tt.send, "\r\n\r\n") {
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Fatalf("response: %v", err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.Close {
					t.Fatal("the server closed the connection itself after the request: nothing left idle")
				}
			}
			_, err = io.Copy(io.Discard, r) // returns when the server closes the connection
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal("the connection is still open after a minute")
			}
		})
	}
}
