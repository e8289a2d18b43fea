// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build !amd64

package scan

const (
	teddyAVX2   = false
	teddyAVX512 = false
)

func teddyScan(*teddyMasks, []byte, []uint64, []uint32) (n, next, lines int, flags uint8) {
	panic("teddyScan needs amd64")
}

func teddyScan512(*teddyMasks, []byte, []uint64, []uint32) (n, next, lines int, flags uint8) {
	panic("teddyScan512 needs amd64")
}

func Prefetch(*byte) {}
