// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package render

import (
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

// TestWrappedTokenEvidence: a klog line whose message carries "Bearer <JWT>" and is cut at
// 4096 bytes (a file wrapped at a line length, or a CRI partial line) puts the rest of the
// token at the start of the next line; that line is evidence of its own (its message goes on),
// redacted a line at a time, and no output format may carry the signature from either line.
func TestWrappedTokenEvidence(t *testing.T) {
	t.Parallel()
	var sig strings.Builder
	for i := range 8 { // an RS256 signature is 342 characters
		sig.WriteString(redacttest.Marker([]byte{byte(i), 'w'}, 43))
	}
	tok := redacttest.JWS(sig.String())
	dot1 := strings.IndexByte(tok, '.')
	dot2 := dot1 + 1 + strings.IndexByte(tok[dot1+1:], '.')
	klog := `E1129 08:16:43.535948       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token, invalid signature]" header="Authorization: Bearer `
	rest := `" user-agent="kubectl/v1.36.3" err="[invalid bearer token, invalid signature, no keys found]"`
	const width = 4096
	for _, wrap := range []struct{ name, first, next string }{
		{"file", "", ""},
		{"cri", "2026-11-29T08:16:43.535948123Z stderr P ", "2026-11-29T08:16:43.535948123Z stderr F "},
	} {
		for _, cut := range []int{5, dot1 - 3, dot1, dot1 + 1, dot1 + 20, dot2, dot2 + 1, dot2 + 100, len(tok) - 4} {
			// Pad the message so that the line is cut at width, cut bytes into the token.
			pad := width - len(wrap.first) - len(klog) - cut - 1 // and a space
			line := wrap.first + klog[:len(klog)-len(`header="Authorization: Bearer `)] + strings.Repeat("x", pad) + ` header="Authorization: Bearer ` + tok + rest
			first, second := line[:width], wrap.next+line[width:]
			if !strings.HasSuffix(first, tok[:cut]) || !strings.HasPrefix(second, wrap.next+tok[cut:]) {
				t.Fatalf("%s, cut %d: the line is not cut in the token: %q / %q", wrap.name, cut, first[len(first)-60:], second[:60])
			}
			out := renderAll(t, first+"\n"+second+"\n")
			if strings.Count(out, "no keys found") < 4 {
				t.Fatalf("%s, cut %d: the second line is not evidence:\n%s", wrap.name, cut, out)
			}
			s := sig.String()
			for i := 0; i+8 <= len(s); i++ {
				if strings.Contains(out, s[i:i+8]) {
					t.Errorf("%s, cut %d: the signature's %q is in the output", wrap.name, cut, s[i:i+8])
					break
				}
			}
		}
	}
}
