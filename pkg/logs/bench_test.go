// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
	"github.com/credwatch/credwatch/pkg/logs/internal/loggen"
)

var benchLog = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	if _, _, err := loggen.Write(&b, loggen.Options{Bytes: 64 << 20, Seed: 7}); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// BenchmarkAnalyze is the whole pipeline on a 64 MiB mixed-format log with 5% auth lines.
func BenchmarkAnalyze(b *testing.B) {
	data := benchLog()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		in := Input{Name: "bench", Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
		if _, err := Analyze(context.Background(), Config{}, []Input{in}); err != nil {
			b.Fatal(err)
		}
	}
}

var benchLines = []string{
	`kube-apiserver-ip-10-0-252-80.eu-west-2.compute.internal kube-apiserver E1215 08:16:43.535948       1 authentication.go:63] "Unable to authenticate the request" err="[invalid bearer token, square/go-jose: error in cryptographic primitive]"`,
	`{"log":"E1129 08:00:01.017000       1 authentication.go:75] \"Unable to authenticate the request\" err=\"[invalid bearer token, invalid signature, no keys found]\"\n","stream":"stderr","time":"2026-11-29T08:00:01.017Z"}`,
	`2026-11-29T08:00:04.918Z stderr F E1129 08:00:04.918000       1 authentication.go:53] Unable to authenticate the request due to an error: [invalid bearer token, context deadline exceeded]`,
	`Dec 16 09:25:23 ip-10-224-148-177 kubelet[1484]: E1216 09:25:23.257848    1484 controller.go:187] failed to update lease, error: Put "https://lb:6443/x?timeout=10s": net/http: request canceled (Client.Timeout exceeded while awaiting headers)`,
}

// BenchmarkClassify parses and classifies typical auth and context lines.
func BenchmarkClassify(b *testing.B) {
	cl := cause.NewClassifier(catalogue.Default())
	for b.Loop() {
		for _, l := range benchLines {
			Classify(cl, parseRecord(l, lineHint{}))
		}
	}
}

// BenchmarkAnalyzeFile is the whole pipeline on the file named by CREDWATCH_BENCH_LOG (for
// profiling on hack/bench-logs.sh's files: go test -bench AnalyzeFile -cpuprofile cpu.out).
func BenchmarkAnalyzeFile(b *testing.B) {
	path := os.Getenv("CREDWATCH_BENCH_LOG")
	if path == "" {
		b.Skip("CREDWATCH_BENCH_LOG is not set")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		if _, err := Analyze(context.Background(), Config{}, []Input{fileInput(context.Background(), path, st)}); err != nil {
			b.Fatal(err)
		}
	}
}
