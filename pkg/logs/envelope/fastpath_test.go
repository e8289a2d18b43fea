// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/logs/internal/quoted"
)

// checkJSONKeys compares scanJSONKeys, one pass over a line's quotes, with the plain code it
// replaces: quoted.KeyOffsets and strings.Contains.
func checkJSONKeys(t *testing.T, line string) {
	var off [len(flatKeys)]int
	audit, log := scanJSONKeys(line, &off)
	var want [len(flatKeys)]int
	quoted.KeyOffsets(line, flatKeys[:], want[:])
	if off != want || audit != strings.Contains(line, `"audit.k8s.io/`) || log != strings.Contains(line, `"log":`) {
		t.Errorf("scanJSONKeys(%q) = %v %v %v, want %v %v %v", line, off, audit, log, want,
			strings.Contains(line, `"audit.k8s.io/`), strings.Contains(line, `"log":`))
	}
}

var jsonKeySeeds = []string{
	`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","responseStatus":{"code":401}}`,
	`{"msg":"x \"log\": y","err":"e","ts":1.5,"time":"t","ts":2}`,
	`{"msg":"a","message":"b","err":"c","error":"d","logger":"l","level":"e","caller":"c","host":"h","hostname":"n"}`,
	`{"log":"x"}`, `"log"`, `"log":`, `{"msg"`, `"audit.k8s.io/`, `"`, `""`, `"":`, ``,
	`{"ts":1765786603.535948,"msg":"Unable to authenticate the request","err":"invalid bearer token"}`,
}

// The fast paths against the plain code they replace, on the seeds and on fuzzed input.
func checkFastPaths(t *testing.T, line string) {
	checkIndexBar(t, line)
	checkJSONKeys(t, line)
}

func TestFastPaths(t *testing.T) {
	t.Parallel()
	for _, s := range append(indexBarSeeds, jsonKeySeeds...) {
		checkFastPaths(t, s)
	}
}

func FuzzFastPaths(f *testing.F) {
	for _, s := range append(indexBarSeeds, jsonKeySeeds...) {
		f.Add(s)
	}
	f.Fuzz(checkFastPaths)
}
