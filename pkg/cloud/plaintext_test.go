// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"strings"
	"testing"
)

// TestPlaintextLogin: a Keystone secret sent to an http:// auth URL is a finding, whether or not
// credwatch logged in; TLS or no secret at all is not.
func TestPlaintextLogin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    Credential
		want string // part of the finding's message; "" = no finding
	}{
		{"password over http", Credential{Provider: OpenStack, Server: "http://keystone:5000/v3", Username: "occm"}.WithPassword("Pw-9x!q"),
			"Keystone occm@http://keystone:5000/v3 logs in over plain http: its password crosses"},
		{"scheme in capitals, spaces around", Credential{Provider: OpenStack, Server: " HTTP://keystone/ ", Username: "occm"}.WithPassword("Pw-9x!q"),
			"its password crosses"},
		{"application credential over http", Credential{Provider: OpenStack, Server: "http://keystone/v3", AppCredentialID: "ac1"}.WithPassword("Ac-7z!k"),
			"its application-credential secret crosses"},
		{"https", Credential{Provider: OpenStack, Server: "https://keystone:5000/v3", Username: "occm"}.WithPassword("Pw-9x!q"), ""},
		{"no secret to send", Credential{Provider: OpenStack, Server: "http://keystone/v3", Username: "occm"}, ""},
		{"vSphere host", Credential{Provider: VSphere, Server: "http://vc", Username: "u"}.WithPassword("Pw-9x!q"), ""},
	}
	for _, tt := range tests {
		it := Item{Credential: tt.c}
		var got []string
		for _, f := range itemFindings(&it) {
			if f.ID == IDPlaintext {
				got = append(got, f.Message)
			}
		}
		switch {
		case tt.want == "" && len(got) > 0:
			t.Errorf("%s: findings %q, want none", tt.name, got)
		case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
			t.Errorf("%s: findings %q, want one with %q", tt.name, got, tt.want)
		}
		for _, m := range got {
			if strings.Contains(m, tt.c.Password()) {
				t.Errorf("%s: %q shows the secret", tt.name, m)
			}
		}
	}
}
