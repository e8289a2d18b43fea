// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import "strings"

// scanJSONKeys is, in one pass over line's quotes, what JSONLine asks of a JSON line:
// off[i] is the index of the first `"flatKeys[i]":` (-1 when absent, as quoted.KeyOffsets
// gives), audit whether line contains `"audit.k8s.io/` and log whether it contains `"log":`.
// Every quote of the line is visited, so both answers are those of strings.Contains; a key
// holds no quote, so `"key":` at a quote means the next quote closes exactly key.
func scanJSONKeys(line string, off *[len(flatKeys)]int) (audit, log bool) {
	for i := range off {
		off[i] = -1
	}
	q := strings.IndexByte(line, '"')
	for q >= 0 {
		rest := line[q+1:]
		j := strings.IndexByte(rest, '"')
		// The first byte before the call: most quotes open no "audit.k8s.io/".
		if !audit && len(rest) > 0 && rest[0] == 'a' && strings.HasPrefix(rest, "audit.k8s.io/") {
			audit = true
		}
		if j < 0 {
			break
		}
		if j+1 < len(rest) && rest[j+1] == ':' {
			if k := flatKeyIndex(rest[:j]); k >= 0 && off[k] < 0 {
				off[k] = q
			} else if k < 0 && rest[:j] == "log" {
				log = true
			}
		}
		q += 1 + j
	}
	return audit, log
}

// flatKeyIndex is the index of key in flatKeys, or -1.
func flatKeyIndex(key string) int {
	switch key {
	case "msg":
		return keyMsg
	case "message":
		return keyMessage
	case "err":
		return keyErr
	case "error":
		return keyError
	case "logger":
		return keyLogger
	case "level":
		return keyLevel
	case "caller":
		return keyCaller
	case "host":
		return keyHost
	case "hostname":
		return keyHostname
	case "ts":
		return keyTs
	case "time":
		return keyTime
	}
	return -1
}
