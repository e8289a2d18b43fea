// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package agg aggregates classified lines: per host, component and cause (Key) it counts them,
// their first and last times, their lines per minute (Series) and the other causes they name,
// and keeps the earliest and latest of them as evidence. It is generic over the caller's event
// type and knows nothing of formats or catalogues; each worker has its own Aggregator, merged
// at the end (Merge).
package agg
