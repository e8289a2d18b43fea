// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

//go:build !linux

package watch

import "errors"

// labEndpoints: the lab runs only on Linux (pkg/lab), so there is none to watch here.
func labEndpoints(string) (func() []string, error) {
	return nil, errors.New("the credwatch lab runs only on Linux")
}
