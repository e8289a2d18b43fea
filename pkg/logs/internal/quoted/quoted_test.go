package quoted

import (
	"strings"
	"testing"
)

// FuzzKeyOffsets checks the one-pass key search against strings.Index of every key.
func FuzzKeyOffsets(f *testing.F) {
	for _, s := range []string{`{"ts":1.5,"msg":"a","err":"b"}`, `{"msg":"\"msg\":x","message":"y"}`, `"""msg":`,
		`{"time":"t","host":"h","hostname":"hn"}`, `"ts"`, `{"level":"error","logger":"x","caller":"c.go:1"}`} {
		f.Add(s)
	}
	keys := []string{"msg", "message", "err", "error", "logger", "level", "caller", "host", "hostname", "ts", "time", ""}
	f.Fuzz(func(t *testing.T, line string) {
		off := make([]int, len(keys))
		KeyOffsets(line, keys, off)
		for i, k := range keys {
			if want := strings.Index(line, `"`+k+`":`); off[i] != want {
				t.Fatalf("%q in %q: at %d, want %d", k, line, off[i], want)
			}
		}
	})
}
