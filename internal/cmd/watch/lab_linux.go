// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import "github.com/credwatch/credwatch/pkg/lab"

// labEndpoints reads the members of the lab in dir from its state.json, again at every call.
func labEndpoints(dir string) (func() []string, error) {
	if _, err := lab.ReadState(dir); err != nil {
		return nil, err
	}
	return func() []string {
		st, err := lab.ReadState(dir)
		if err != nil {
			return nil
		}
		out := make([]string, 0, len(st.Members))
		for _, m := range st.Members {
			out = append(out, m.URL)
		}
		return out
	}, nil
}
