// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cmdtest

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/finding/sariftest"
)

// FailedRun fails t unless stdout is the log of a failed run (cli.OutputFlag.Failed): a JUnit
// file with a failing case whose text holds want, or a valid SARIF log whose invocation is not
// successful, has exit code code, and a notification that holds want.
func FailedRun(t testing.TB, stdout string, code int, want string) {
	t.Helper()
	if strings.HasPrefix(stdout, "<?xml") {
		if !strings.Contains(stdout, `failures="1"`) || !strings.Contains(stdout, want) {
			t.Fatalf("JUnit without a failing case that says %q:\n%s", want, stdout)
		}
		return
	}
	if stdout == "" {
		t.Fatal("nothing on stdout, want the failed run's SARIF log")
	}
	doc := sariftest.DecodeBytes(t, []byte(stdout))
	sariftest.Validate(t, doc)
	invs, _ := doc.(map[string]any)["runs"].([]any)[0].(map[string]any)["invocations"].([]any)
	if len(invs) != 1 {
		t.Fatalf("invocations %v, want one", invs)
	}
	inv := invs[0].(map[string]any)
	if inv["executionSuccessful"] != false || inv["exitCode"] != json.Number(strconv.Itoa(code)) {
		t.Errorf("invocation %v, want executionSuccessful false and exitCode %d", inv, code)
	}
	if b, _ := json.Marshal(inv["toolExecutionNotifications"]); !strings.Contains(string(b), want) {
		t.Errorf("notifications %s, want %q", b, want)
	}
}
