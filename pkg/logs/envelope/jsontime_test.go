// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"testing"
	"time"
)

// TestDecimalTime checks that decimalTime reads the numbers klog writes (FuzzDecimalTime only
// compares the ones it reads).
func TestDecimalTime(t *testing.T) {
	for raw, want := range map[string]time.Time{"1795939200.484": time.Unix(1795939200, 484000000),
		"1795939200.484123": time.Unix(1795939200, 484123000), "1795939200": time.Unix(1795939200, 0)} {
		if got, ok := decimalTime(raw); !ok || !got.Equal(want) {
			t.Errorf("decimalTime(%q) = %v, %v; want %v", raw, got, ok, want)
		}
	}
	for _, raw := range []string{"1e9", "-1", "0", "1795939200.4841234", "4294967296.5", ".5", "1795939200."} {
		if _, ok := decimalTime(raw); ok {
			t.Errorf("decimalTime(%q) read it; floatTime should", raw)
		}
	}
}

// FuzzDecimalTime checks decimalTime, klog's "ts" read without a float, against floatTime.
func FuzzDecimalTime(f *testing.F) {
	for _, s := range []string{"1795939200.484", "1795939200.484123", "1795939200", "0.5", "0", "1e9", "99999999999.999999",
		"100000000000", "100000000000.000001", "1795939200.", ".5", "-1", "1795939200.4841234", "007.000100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := decimalTime(s)
		if !ok {
			return
		}
		if want := floatTime(s); !got.Equal(want) {
			t.Fatalf("decimalTime(%q) = %v, floatTime %v", s, got, want)
		}
	})
}
