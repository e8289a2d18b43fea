// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

// IsDigits reports whether s is one or more ASCII digits (the klog header and the minute clock
// of pkg/logs use it too).
func IsDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}
