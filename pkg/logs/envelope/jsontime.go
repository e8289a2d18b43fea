// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// JSONTime reads klog's float seconds ("ts":1700000000.123) and zap's RFC 3339 string.
func JSONTime(raw string) time.Time {
	if len(raw) == 0 {
		return time.Time{}
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t
			}
		}
		return time.Time{}
	}
	if t, ok := decimalTime(raw); ok {
		return t
	}
	return floatTime(raw)
}

// floatTime reads klog's "ts", seconds since the epoch as a JSON number, to the microsecond.
func floatTime(raw string) time.Time {
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || f <= 0 || f > 1e11 {
		return time.Time{}
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000) // klog writes microseconds
}

// decimalTime is floatTime for the plain decimals klog writes (1795939200.484123: seconds
// before 2038, a point and at most 6 digits), read without a float: ok is false for any other
// number, which floatTime reads (below 2^31 seconds a float64 holds the microseconds exactly
// enough to round to them; FuzzDecimalTime compares the two).
func decimalTime(raw string) (time.Time, bool) {
	sec, i := int64(0), 0
	for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
		sec = sec*10 + int64(raw[i]-'0')
	}
	if i == 0 || i > 10 || sec >= 1<<31 {
		return time.Time{}, false
	}
	us, digits := int64(0), 0
	if i < len(raw) && raw[i] == '.' {
		for i++; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
			us = us*10 + int64(raw[i]-'0')
			digits++
		}
		if digits == 0 || digits > 6 {
			return time.Time{}, false
		}
	}
	if i != len(raw) || sec == 0 && us == 0 {
		return time.Time{}, false
	}
	for ; digits < 6; digits++ {
		us *= 10
	}
	return time.Unix(sec, us*1000), true
}
