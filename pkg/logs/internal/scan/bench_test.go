// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import (
	"bytes"
	"testing"

	"github.com/credwatch/credwatch/pkg/logs/internal/loggen"
)

// benchLog is pkg/logs's benchmark log: 64 MiB, mixed formats, 5 % authentication lines.
func benchLog(b *testing.B) []byte {
	var log bytes.Buffer
	if _, _, err := loggen.Write(&log, loggen.Options{Bytes: 64 << 20, Seed: 7}); err != nil {
		b.Fatal(err)
	}
	return log.Bytes()
}

// BenchmarkGate is the anchor scan alone, one core, in every variant this machine runs.
func BenchmarkGate(b *testing.B) {
	data := benchLog(b)
	for name, g := range gateVariants(b) {
		b.Run(name, func(b *testing.B) {
			var starts []int
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				starts = g.Lines(data, starts)
			}
		})
	}
}
