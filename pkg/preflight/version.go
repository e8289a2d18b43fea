// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"fmt"
	"strconv"
	"strings"
)

// semver is a provider version vMAJOR.MINOR.PATCH (pre-release suffixes ignored).
type semver struct{ Major, Minor, Patch int }

func parseSemver(s string) (semver, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(t, "-+"); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 {
		return semver{}, fmt.Errorf("version %q: want vX.Y.Z", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return semver{}, fmt.Errorf("version %q: want vX.Y.Z", s)
		}
		n[i] = v
	}
	return semver{n[0], n[1], n[2]}, nil
}

// less reports whether v is older than major.minor.patch.
func (v semver) less(major, minor, patch int) bool {
	if v.Major != major {
		return v.Major < major
	}
	if v.Minor != minor {
		return v.Minor < minor
	}
	return v.Patch < patch
}
