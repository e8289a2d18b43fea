// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"strings"
	"time"
)

// LeadingTime reads an RFC 3339 timestamp that starts a line of an unstructured logger
// (hclog's "2021-09-08T08:45:40.239Z [ERROR] …", istio's tab-separated lines).
func LeadingTime(line string) (rest string, t time.Time, ok bool) {
	if len(line) < 21 || !IsDigits(line[:4]) || line[4] != '-' || line[10] != 'T' {
		return "", t, false
	}
	end := strings.IndexAny(line, " \t")
	if end < 20 {
		return "", t, false
	}
	t, err := time.Parse(time.RFC3339Nano, line[:end])
	if err != nil {
		return "", t, false
	}
	return strings.TrimLeft(line[end:], " \t"), t, true
}
