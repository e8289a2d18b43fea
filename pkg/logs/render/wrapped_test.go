// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/logs"
	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

// TestWrappedTokenEvidence: a klog line whose message carries "Bearer <JWT>" and is cut inside
// the token (a file wrapped at a line length, a CRI partial line, Docker's json-file driver
// cutting at 16 KiB) puts the rest of the token at the start of the next line; that line is
// evidence of its own (its message goes on), redacted a line at a time, and no output format
// may carry the signature from either line — also when the two lines fall in two reading blocks.
func TestWrappedTokenEvidence(t *testing.T) {
	t.Parallel()
	var sig strings.Builder
	for i := range 8 { // an RS256 signature is 342 characters
		sig.WriteString(redacttest.Marker([]byte{byte(i), 'w'}, 43))
	}
	tok := redacttest.JWS(sig.String())
	dot1 := strings.IndexByte(tok, '.')
	dot2 := dot1 + 1 + strings.IndexByte(tok[dot1+1:], '.')
	const header = `header="Authorization: Bearer `
	klog := `E1129 08:16:43.535948       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, invalid signature]" `
	rest := `" user-agent="kubectl/v1.36.3" err="[invalid bearer token, invalid signature, no keys found]"`
	const width = 4096
	docker := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return `{"log":` + string(b) + `,"stream":"stderr","time":"2026-11-29T08:16:43.535948123Z"}`
	}
	// Each wrap writes the two parts of the line as its format does.
	wraps := []struct {
		name string
		wrap func(first, second string) (string, string)
	}{
		{"file", func(a, b string) (string, string) { return a, b }},
		{"cri", func(a, b string) (string, string) {
			return "2026-11-29T08:16:43.535948123Z stderr P " + a, "2026-11-29T08:16:43.535948123Z stderr F " + b
		}},
		{"docker", func(a, b string) (string, string) { return docker(a), docker(b + "\n") }},
	}
	// The reading path's first buffer is BlockSize+MaxLineBytes bytes, cut after its last
	// newline: a filler line puts that cut right after the first part.
	const buffer = 1 + 8192
	filler := func(first, second string) string {
		fl := "I1129 08:16:43.000000       1 x.go:1] filler "
		return fl + strings.Repeat("x", buffer-len(first)-1-len(second)/2-len(fl)-1) + "\n"
	}
	for _, w := range wraps {
		for _, blocks := range []bool{false, true} {
			for _, cut := range []int{5, dot1 - 3, dot1, dot1 + 1, dot1 + 20, dot2, dot2 + 1, dot2 + 100, len(tok) - 4} {
				name := w.name
				// Pad the message so that the line is cut at width, cut bytes into the token.
				pad := width - len(klog) - len(header) - cut - 1 // and a space
				line := klog + strings.Repeat("x", pad) + " " + header + tok + rest
				first, second := w.wrap(line[:width], line[width:])
				if !strings.Contains(first, tok[:cut]) || !strings.Contains(second, tok[cut:]) {
					t.Fatalf("%s, cut %d: the line is not cut in the token", name, cut)
				}
				data, cfg := first+"\n"+second+"\n", logs.Config{}
				if blocks {
					name += " across blocks"
					data = filler(first, second) + data
					cfg.BlockSize, cfg.MaxLineBytes = 1, buffer-1
				}
				out := renderAllWith(t, cfg, data)
				if strings.Count(out, "no keys found") < 4 {
					t.Fatalf("%s, cut %d: the second line is not evidence:\n%s", name, cut, out)
				}
				s := sig.String()
				for i := 0; i+8 <= len(s); i++ {
					if strings.Contains(out, s[i:i+8]) {
						t.Errorf("%s, cut %d: the signature's %q is in the output", name, cut, s[i:i+8])
						break
					}
				}
			}
		}
	}
}
