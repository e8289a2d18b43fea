// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cli

import (
	"io"

	"github.com/spf13/pflag"
)

// Deprecate marks the flag name of fs deprecated for one release, msg saying what to use instead:
// pflag hides it from help and, each time it is given, prints "Flag --NAME has been deprecated,
// MSG". The notice goes to errOut (Streams.ErrOut): cobra would print it to the command's output,
// which is stdout here, where it would spoil -o json.
func Deprecate(fs *pflag.FlagSet, errOut io.Writer, name, msg string) {
	_ = fs.MarkDeprecated(name, msg)
	fs.SetOutput(errOut)
}

// Conflicting is the usage error for a flag and its deprecated spelling given with values that
// disagree: given and old are each flag as given ("--capi-cluster w1"), flag the name to keep.
func Conflicting(given, old, flag string) error {
	return Usagef("%s and %s (its deprecated spelling) disagree: give %s only", given, old, flag)
}
