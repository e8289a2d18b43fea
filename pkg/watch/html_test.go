// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/credwatch/credwatch/internal/golden"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/markup"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestTimelineChartGolden draws a fixed roll: apiserver-2 comes back with its own key (its
// tokens are rejected by apiserver-1), then apiserver-3 goes down and comes back unready.
func TestTimelineChartGolden(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	member := func(name string, up, ready bool) MemberState {
		m := MemberState{Endpoint: check.Endpoint{Name: name}, Up: up, Ready: ready, Version: "v1.36.3"}
		if !up {
			m.Error = "dial tcp 10.200.1.13:6443: connect: connection refused"
		} else if !ready {
			m.NotReady = []string{"etcd"}
		}
		return m
	}
	tl := NewTimeline()
	for i := range 8 {
		s := &State{Interval: i + 1, Time: t0.Add(time.Duration(i) * 10 * time.Second), Took: 2 * time.Second,
			Members: []MemberState{member("apiserver-1", true, true), member("apiserver-2", true, true), member("apiserver-3", i < 4 || i > 5, i < 4 || i > 6)}}
		if i >= 2 && i < 5 {
			s.Trust = []Cell{{Signer: "apiserver-2", Verifier: "apiserver-1", Cause: "signing-key-unknown", Message: "square/go-jose: error in cryptographic primitive"}}
			s.Held = []Cell{{Signer: "apiserver-3", Verifier: "apiserver-1", Cause: "no-such-cause", Message: "rejected"}}
		}
		tl.Observe(s, nil)
	}
	var b bytes.Buffer
	w := markup.New(&b)
	tl.chart().WriteSVG(w)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "timeline.svg"), b.Bytes(), *update)
}
