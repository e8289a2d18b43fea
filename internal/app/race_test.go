// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build race

package app

// raceEnabled: under -race every allocation has shadow memory (Go's race detector costs 5-10x
// the memory), so a bound on peak RSS measures the detector, not credwatch.
const raceEnabled = true
