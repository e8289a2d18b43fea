package logs

import (
	"strings"
	"testing"
	"time"
)

// FuzzEnvelopeFallbacks: compose and cut-syslog prefixes and leading timestamps only ever
// return the end of the line and a name taken from it.
func FuzzEnvelopeFallbacks(f *testing.F) {
	f.Add(`harbor-core      | 2021-05-21T05:04:58Z [ERROR] boom`)
	f.Add(`3 16:12:47 Ks-Kubernetes-Node01 k3s[911]: E0403 16:12:47.424793     911 authentication.go:63] "x"`)
	f.Fuzz(func(t *testing.T, line string) {
		if rest, name, ok := parseCompose(line); ok && (!strings.HasSuffix(line, rest) || !strings.HasPrefix(line, name)) {
			t.Fatalf("compose %q: %q %q", line, name, rest)
		}
		if rest, prog, ok := parseCutSyslog(line); ok && (!strings.HasSuffix(line, rest) || !strings.Contains(line, prog+"[")) {
			t.Fatalf("cut syslog %q: %q %q", line, prog, rest)
		}
		if rest, _, ok := parseLeadingTime(line); ok && !strings.HasSuffix(line, rest) {
			t.Fatalf("leading time %q: %q", line, rest)
		}
	})
}

// FuzzAccessLog401: whatever it reads, an access-log line is a 401 and its fields come from it.
func FuzzAccessLog401(f *testing.F) {
	f.Add(`GET /api/v1/nodes?limit=500: (4.386595ms) 401 [metrics-server/v0.0.0 (linux/amd64) kubernetes/$Format 35.193.27.95:47328]`)
	f.Add(`"HTTP" verb="GET" URI="/api" latency="1ms" userAgent="kubectl/v1.36.3" audit-ID="a" srcIP="10.0.0.9:5000" resp=401`)
	f.Fuzz(func(t *testing.T, msg string) {
		a, ok := accessLog401(msg)
		if !ok {
			return
		}
		if a.Code != 401 || !strings.Contains(msg, a.Verb) || !strings.Contains(msg, a.URI) {
			t.Fatalf("%q: %+v", msg, a)
		}
	})
}

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
