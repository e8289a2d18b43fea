// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package lab

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseState: a state that parses survives being written as saveState writes it and read
// back unchanged, and PIDs lists one pid per recorded process.
func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"dir":"/tmp/lab","lbAddress":"127.0.20.1:6443","members":[{"name":"apiserver-1","pid":42}],"etcd":[{"name":"etcd-1","pid":41}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseState(data)
		if err != nil {
			return
		}
		written, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			t.Fatalf("write a parsed state: %v", err)
		}
		again, err := ParseState(written)
		if err != nil {
			t.Fatalf("a written state does not parse: %v\n%s", err, written)
		}
		rewritten, _ := json.MarshalIndent(again, "", "  ")
		if !bytes.Equal(written, rewritten) {
			t.Fatalf("state changed in a write and read:\n%s\n%s", written, rewritten)
		}
		want := len(s.Members) + len(s.Etcd)
		if s.ControllerManager != nil {
			want++
		}
		if got := len(s.PIDs()); got != want {
			t.Fatalf("PIDs lists %d pids for %d processes", got, want)
		}
	})
}
