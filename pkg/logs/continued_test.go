// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/logs/internal/scan"
	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

func TestDockerPartial(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		line, part string
		ok         bool
	}{
		{`{"log":"E1129 token eyJhbGc","stream":"stderr","time":"2026-11-29T08:16:43Z"}`, "E1129 token eyJhbGc", true},
		{`{"log":"E1129 whole line\n","stream":"stderr","time":"2026-11-29T08:16:43Z"}`, "", false},
		{`{"log":"a backslash, then n: \\n","stream":"stderr"}`, `a backslash, then n: \\n`, true},
		{`{"log":"a backslash and a newline: \\\n","stream":"stderr"}`, "", false},
		{`{"log":"a \"quoted\" eyJhbGc","stream":"stderr"}`, `a \"quoted\" eyJhbGc`, true},
		{`{"log":"no end`, "", false},
		{`{"msg":"not docker"}`, "", false},
		{`E1129 08:16:43.535948 1 x.go:1] plain`, "", false},
	} {
		part, ok := dockerPartial(tt.line)
		if part != tt.part || ok != tt.ok {
			t.Errorf("dockerPartial(%q) = %q, %v; want %q, %v", tt.line, part, ok, tt.part, tt.ok)
		}
	}
}

func TestLastLine(t *testing.T) {
	t.Parallel()
	for block, want := range map[string]string{"": "", "a\n": "a", "a\nb\n": "b", "a\nb": "b", "\n": ""} {
		if got := lastLine([]byte(block)); got != want {
			t.Errorf("lastLine(%q) = %q, want %q", block, got, want)
		}
	}
	long := strings.Repeat("x", maxPrevLine+10) + "tail\n"
	if got := lastLine([]byte(long)); len(got) != maxPrevLine || !strings.HasSuffix(got, "tail") {
		t.Errorf("lastLine of a long line: %d bytes ending %q", len(got), got[len(got)-4:])
	}
}

// TestWrappedTokenAcrossMappedBlocks: the rest of a token wrapped to the next line is kept out
// of that line's evidence when the two lines fall in two blocks of a memory-mapped file (the
// render package's TestWrappedTokenEvidence covers the reading path).
func TestWrappedTokenAcrossMappedBlocks(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 8 {
		b.WriteString(redacttest.Marker([]byte{byte(i), 'm'}, 43))
	}
	sig := b.String()
	tok := redacttest.JWS(sig)
	const (
		cfgBuf = 1 + 8191       // Config below: BlockSize+MaxLineBytes
		block  = cfgBuf / 2 * 4 // a mapped block (mapped.go: mappedBlocks)
		cut    = 40             // bytes of the token on the first line
		filler = "I1129 08:16:43.000000       1 x.go:1] filler\n"
	)
	first := `E1129 08:16:43.535948       1 authentication.go:75] "Unable to authenticate the request" err="[invalid bearer token]" header="Authorization: Bearer ` + tok[:cut]
	second := tok[cut:] + `" err="[invalid bearer token, invalid signature, no keys found]"`
	// The first block ends at the first newline at or after block bytes: first's.
	head := strings.Repeat(filler, (block-len(first)/2)/len(filler))
	var data strings.Builder
	data.WriteString(head + first + "\n" + second + "\n")
	for data.Len() < scan.MapMinimum+block {
		data.WriteString(filler)
	}
	if len(head) >= block || len(head)+len(first) < block {
		t.Fatalf("the first block does not end after the first line: %d, %d", len(head), len(head)+len(first))
	}
	path := filepath.Join(t.TempDir(), "apiserver.log")
	if err := os.WriteFile(path, []byte(data.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(context.Background(), Config{Workers: 2, BlockSize: 1, MaxLineBytes: 8191}, []Input{fileInput(context.Background(), path, st)})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	out := string(js)
	if !strings.Contains(out, "no keys found") {
		t.Fatal("the second line is not evidence")
	}
	for i := 0; i+8 <= len(sig); i++ {
		if strings.Contains(out, sig[i:i+8]) {
			t.Fatalf("the signature's %q is in the report", sig[i:i+8])
		}
	}
}
