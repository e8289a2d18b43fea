// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package finding

import (
	"strings"

	"github.com/credwatch/credwatch/pkg/catalogue"
)

// Group is findings that say the same thing about different places: one ID and severity, and
// one message but for the member or object each names. Tables print a group as one line (an
// unreachable source skips several checks with one reason; one drifted key breaks every
// member's trust); JSON keeps every finding.
type Group struct {
	ID       string
	Severity catalogue.Severity
	Where    []string // the member or object of each finding, in order; none when they name none
	Message  string   // the first finding's message, its place replaced by every place
	Remedy   string
	Count    int
}

// Collapse groups fs in the order each group first appears.
func Collapse(fs []Finding) []Group {
	var out []Group
	index := map[string]int{}
	firstWhere := map[int]string{}
	for _, f := range fs {
		where := f.Where()
		key := f.ID + "\x00" + string(f.Severity) + "\x00" + f.Message
		if where != "" {
			key = f.ID + "\x00" + string(f.Severity) + "\x00" + strings.ReplaceAll(f.Message, where, "\x01")
		}
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			firstWhere[i] = where
			out = append(out, Group{ID: f.ID, Severity: f.Severity, Message: f.Message, Remedy: f.Remedy})
		}
		g := &out[i]
		g.Count++
		if where != "" {
			g.Where = append(g.Where, where)
		}
	}
	for i := range out {
		if g := &out[i]; len(g.Where) > 1 && firstWhere[i] != "" {
			g.Message = strings.ReplaceAll(g.Message, firstWhere[i], strings.Join(g.Where, ", "))
		}
	}
	return out
}

// Where is the member a finding is about, else its object, else "".
func (f Finding) Where() string {
	if f.Member != "" {
		return f.Member
	}
	return f.Object
}
