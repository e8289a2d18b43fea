// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build !race

package app

const raceEnabled = false
