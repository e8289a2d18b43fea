// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command loggen writes a synthetic kube-apiserver log for hack/bench-logs.sh:
// loggen -size 1G -o FILE prints "lines auth" on stdout.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/credwatch/credwatch/pkg/logs/internal/loggen"
)

func main() {
	size := flag.String("size", "1G", "approximate size (K, M, G suffixes)")
	out := flag.String("o", "", "output file (default stdout)")
	share := flag.Float64("auth", 0.05, "share of authentication-failure lines")
	flag.Parse()
	n, err := parseSize(*size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loggen:", err)
		os.Exit(2)
	}
	w := os.Stdout
	if *out != "" {
		if w, err = os.Create(*out); err != nil {
			fmt.Fprintln(os.Stderr, "loggen:", err)
			os.Exit(2)
		}
	}
	lines, auth, err := loggen.Write(w, loggen.Options{Bytes: n, AuthShare: *share, Seed: 1})
	if err == nil && w != os.Stdout {
		err = w.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loggen:", err)
		os.Exit(1)
	}
	fmt.Println(lines, auth)
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	return n * mult, nil
}
