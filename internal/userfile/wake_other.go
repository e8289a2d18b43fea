// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build !unix

package userfile

// wakeFIFO does nothing where there are no FIFOs to open (an abandoned open is left to end).
func wakeFIFO(string) {}
