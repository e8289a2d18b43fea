// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package cause is the one classifier over the catalogue: it names the cause of a log message
// from the catalogue's message spellings, mapping one line's message (an authentication failure,
// possibly an aggregate of several errors, or a context event such as a lease loss) to a
// catalogue entry. It knows nothing of log formats, inputs or reports: pkg/logs parses those and
// calls Classifier.Classify as the last stage of reading a line (logs.Classify), pkg/watch does
// the same on followed files, and pkg/cloud on controller logs.
package cause
