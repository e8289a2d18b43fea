// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"bytes"
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"

	"github.com/credwatch/credwatch/pkg/redact"
	"github.com/credwatch/credwatch/pkg/redact/redacttest"
)

var loginPasswordRE = regexp.MustCompile(`<password>(.*?)</password>`)

// echoingVCenter is vcsim behind a proxy that answers every Login with an InvalidLogin fault
// whose message echoes the password element of the request as govmomi sent it (XML-escaped),
// escaped once more when twice is set: the worst a vCenter or a proxy in front of it could do.
func echoingVCenter(t *testing.T, twice bool) string {
	t.Helper()
	m := simulator.VPX()
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	s := m.Service.NewServer()
	t.Cleanup(func() { s.Close(); m.Remove() })
	target, _ := url.Parse(s.URL.String())
	target.User, target.Path = nil, ""
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m := loginPasswordRE.FindSubmatch(body)
		if m == nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			proxy.ServeHTTP(w, r)
			return
		}
		echo := string(m[1]) // as sent: XML-escaped once, so the client decodes it to the password
		if twice {
			echo = html.EscapeString(echo) // the client decodes it to the escaped password
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<soapenv:Body><soapenv:Fault><faultcode>ServerFaultCode</faultcode>
<faultstring>Cannot complete login due to an incorrect user name or password (`+echo+`)</faultstring>
<detail><InvalidLoginFault xmlns="urn:vim25" xsi:type="InvalidLogin"></InvalidLoginFault></detail>
</soapenv:Fault></soapenv:Body></soapenv:Envelope>`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/sdk"
}

// TestSOAPFaultEchoesPassword: a vSphere fault that echoes the password, raw or XML-escaped,
// puts it in no output; a password too short to cut out withholds the message.
func TestSOAPFaultEchoesPassword(t *testing.T) {
	for _, twice := range []bool{false, true} {
		server := echoingVCenter(t, twice)
		for _, pw := range []string{`Ж<pa&ss>"w'Щ`, "Ж<", "Ж", "ЖЩЮЯЖЩЮЯ"} {
			c := Credential{Provider: VSphere, Server: server, Username: "u@vsphere.local"}.WithPassword(pw)
			r := NewTester(LoginOptions{Interval: time.Millisecond}).Test(context.Background(), c)
			if r.Verdict != Rejected || r.Fault != "InvalidLogin" {
				t.Fatalf("twice=%v %q: %+v, want rejected/InvalidLogin", twice, pw, r)
			}
			if leak := redacttest.PasswordLeak(r.Detail); leak != "" {
				t.Errorf("twice=%v %q: detail %q: %s", twice, pw, r.Detail, leak)
			}
			if len([]rune(pw)) < redact.MinSecretLen && r.Detail != redact.Withheld {
				t.Errorf("twice=%v %q: detail %q, want it withheld", twice, pw, r.Detail)
			}
			if len([]rune(pw)) >= redact.MinSecretLen && (!strings.Contains(r.Detail, "incorrect user name") || !strings.Contains(r.Detail, redact.Marker)) {
				t.Errorf("twice=%v %q: detail %q should keep the provider's message with the echo cut out", twice, pw, r.Detail)
			}
		}
	}
}
