// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package kubever names Kubernetes minor versions ("lines") and compares them. Message spellings
// and validation behaviour in credwatch are keyed by line.
package kubever

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Kubernetes minor line, e.g. 1.30. Patch levels do not change the messages credwatch knows.
type Version struct {
	Major, Minor int
}

// Lines credwatch knows and tests against.
var (
	// Newest is the default line: the newest the lab builds.
	Newest = Version{1, 36}
	// Old is the old line the lab builds, the last before kid-based key selection.
	Old = Version{1, 30}
	// Oldest is the oldest line whose messages the catalogue knows.
	Oldest = Version{1, 19}
	// Latest is the newest line accepted as input.
	Latest = Version{1, 37}
)

// Parse reads "1.30", "v1.30", "v1.30.14" or "1.36.3-rc.0".
func Parse(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.SplitN(t, ".", 3)
	if len(parts) < 2 {
		return Version{}, fmt.Errorf("kubernetes version %q: want MAJOR.MINOR, e.g. 1.30", s)
	}
	maj, err1 := strconv.Atoi(parts[0])
	minStr := parts[1]
	if i := strings.IndexAny(minStr, "-+"); i >= 0 {
		minStr = minStr[:i]
	}
	mnr, err2 := strconv.Atoi(minStr)
	if err1 != nil || err2 != nil || maj != 1 || mnr < 0 {
		return Version{}, fmt.Errorf("kubernetes version %q: want MAJOR.MINOR, e.g. 1.30", s)
	}
	v := Version{maj, mnr}
	if v.Less(Oldest) || Latest.Less(v) {
		return Version{}, fmt.Errorf("kubernetes version %q: credwatch knows %s to %s", s, Oldest, Latest)
	}
	return v, nil
}

// MustParse is Parse for constants in code and tests; it panics on bad input.
func MustParse(s string) Version {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Less reports whether v is an older line than w.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	return v.Minor < w.Minor
}

// AtLeast reports whether v is w or newer.
func (v Version) AtLeast(w Version) bool { return !v.Less(w) }

// IsZero reports whether v is unset.
func (v Version) IsZero() bool { return v == Version{} }

// In reports whether v lies in [since, until]; empty bounds are open. Bounds are "1.31" strings.
func (v Version) In(since, until string) bool {
	if since != "" && v.Less(MustParse(since)) {
		return false
	}
	if until != "" && MustParse(until).Less(v) {
		return false
	}
	return true
}
