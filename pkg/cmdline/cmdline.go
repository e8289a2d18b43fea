// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package cmdline reads the --flags of a Kubernetes component's command line (a static Pod's
// command and args) the way the component's pflag parser sees them, keeping every value of every
// flag in order so that callers decide between first, last and all.
package cmdline

import "strings"

// Flags maps a flag name (without dashes) to its values in command-line order.
type Flags map[string][]string

// Parse reads --name=value and --name value pairs. A --name followed by nothing or by another
// --flag is a boolean set to "true". Arguments that are not --flags (the binary, positional
// arguments, single-dash shorthands) are ignored.
func Parse(argv []string) Flags {
	out := Flags{}
	for i := 0; i < len(argv); i++ {
		name, val, hasVal := strings.Cut(strings.TrimPrefix(argv[i], "--"), "=")
		if !strings.HasPrefix(argv[i], "--") || name == "" {
			continue
		}
		if !hasVal {
			if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "--") {
				val = argv[i+1]
				i++
			} else {
				val = "true"
			}
		}
		out[name] = append(out[name], val)
	}
	return out
}

// First is name's first value, or "".
func (f Flags) First(name string) string {
	if v := f[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Last is name's last value, or "": what a scalar pflag flag given twice ends up with.
func (f Flags) Last(name string) string {
	if v := f[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

// List is a list flag's values (pflag's StringSlice: every occurrence, each split on commas),
// trimmed, without empty elements.
func (f Flags) List(name string) []string {
	var out []string
	for _, v := range f[name] {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				out = append(out, e)
			}
		}
	}
	return out
}
