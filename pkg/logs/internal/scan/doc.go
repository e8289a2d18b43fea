// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package scan is the first stage of reading a log, before any parser: it cuts inputs into
// blocks of whole lines (NextBlock; large plain files memory-mapped, Map) and finds, in one SIMD
// pass over a block, the lines that hold an anchor worth parsing (Gate: Teddy on AVX2 and
// AVX-512, Wu-Manber elsewhere), with the newlines before each. It knows nothing of log
// formats, records or causes: the caller gives it the anchors (Anchors).
package scan
