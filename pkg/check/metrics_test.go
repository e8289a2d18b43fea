package check

import (
	"strings"
	"testing"
)

const sampleMetrics = `# HELP authentication_attempts [ALPHA] Counter of authenticated attempts.
# TYPE authentication_attempts counter
authentication_attempts{result="error"} 3
authentication_attempts{result="failure"} 2
authentication_attempts{result="success"} 290
# HELP serviceaccount_legacy_tokens_total [ALPHA] Cumulative legacy service account tokens used
# TYPE serviceaccount_legacy_tokens_total counter
serviceaccount_legacy_tokens_total 4
# HELP serviceaccount_stale_tokens_total [ALPHA] Cumulative stale projected service account tokens used
# TYPE serviceaccount_stale_tokens_total counter
serviceaccount_stale_tokens_total 7
# TYPE serviceaccount_valid_tokens_total counter
serviceaccount_valid_tokens_total 11
`

func TestParseMetrics(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader(sampleMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if m.StaleTokens != 7 || m.LegacyTokens != 4 || m.ValidTokens != 11 {
		t.Errorf("got %+v", m)
	}
	if m.AuthAttempts["success"] != 290 || m.AuthAttempts["failure"] != 2 || m.AuthAttempts["error"] != 3 {
		t.Errorf("auth attempts %+v", m.AuthAttempts)
	}
	if _, err := ParseMetrics(strings.NewReader("not{ metrics")); err == nil {
		t.Error("garbage parsed")
	}
	empty, err := ParseMetrics(strings.NewReader(""))
	if err != nil || empty.StaleTokens != 0 || empty.AuthAttempts != nil {
		t.Errorf("empty: %+v %v", empty, err)
	}
}

func FuzzParseMetrics(f *testing.F) {
	f.Add(sampleMetrics)
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		_, _ = ParseMetrics(strings.NewReader(text))
	})
}
