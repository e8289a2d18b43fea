// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scan

import "golang.org/x/sys/cpu"

var (
	teddyAVX2   = cpu.X86.HasAVX2
	teddyAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI
)

// teddyScan looks at the positions p = 0, 32, 64, … of b while b[p:] holds teddyBlock bytes and
// out has room. For every 32 positions with a candidate it appends p<<32 | mask to out, bit j of
// mask set when position p+j is one, and the number of newlines in b[:p] to nls (as long as out).
// It returns how many it appended, the next p, the newlines in b[:next] and flags: teddyNUL when
// b[:next] holds a NUL byte, teddyASCII when every byte of b[:next] is below 128.
//
//go:noescape
func teddyScan(m *teddyMasks, b []byte, out []uint64, nls []uint32) (n, next, lines int, flags uint8)

// teddyScan512 is teddyScan for AVX-512 VBMI: 64 positions at a time, each fingerprint byte
// looked up exactly in a 128-entry table (VPERMI2B) instead of by its two nibbles; it appends two
// entries per 64 positions at most and needs teddyBlock512 bytes from a position on.
//
//go:noescape
func teddyScan512(m *teddyMasks, b []byte, out []uint64, nls []uint32) (n, next, lines int, flags uint8)

// Prefetch asks the CPU to bring the 128 bytes at p into its cache (worker.process: the next
// lines while it reads one).
//
//go:noescape
func Prefetch(p *byte)
