// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package catalogue

import "testing"

func TestParseThreshold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Severity
		err  string
	}{
		{in: "info", want: Info},
		{in: " Warning ", want: Warning},
		{in: "error", want: Error},
		{in: "CRITICAL", want: Critical},
		{in: "none", want: None},
		{in: "None", want: None},
		{in: "loud", err: `severity "loud": want one of info, warning, error, critical, none`},
		{in: "", err: `severity "": want one of info, warning, error, critical, none`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseThreshold(tt.in)
			if msg := errString(err); got != tt.want || msg != tt.err {
				t.Errorf("ParseThreshold(%q) = %q, %q; want %q, %q", tt.in, got, msg, tt.want, tt.err)
			}
		})
	}
	if _, err := ParseSeverity("none"); err == nil {
		t.Error(`ParseSeverity("none") succeeded: none is no finding's severity`)
	}
}

func TestAtLeast(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s, t Severity
		want bool
	}{
		{Info, Info, true},
		{Warning, Error, false},
		{Critical, Error, true},
		{Error, Critical, false},
		{Critical, None, false},
		{Info, None, false},
		{None, None, false},
	}
	for _, tt := range tests {
		if got := tt.s.AtLeast(tt.t); got != tt.want {
			t.Errorf("%s.AtLeast(%s) = %v, want %v", tt.s, tt.t, got, tt.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
