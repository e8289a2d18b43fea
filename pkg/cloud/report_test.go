// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/report"
)

// TestReportTableGolden renders the table of every test config, without logins or a cluster.
func TestReportTableGolden(t *testing.T) {
	cfgs, errs := LoadPaths([]string{"testdata/configs"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r := Judge(Fetch(context.Background(), FetchOptions{Configs: cfgs, NoLogin: true, Now: time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)}), "")
	var buf bytes.Buffer
	if err := r.WriteTable(&buf, report.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "golden", "report-no-login.txt")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("table differs from %s:\n%s", golden, buf.String())
	}
	if bytes.Contains(buf.Bytes(), []byte("occm-pass")) || bytes.Contains(buf.Bytes(), []byte("csi-pass")) {
		t.Error("a password was printed")
	}
}
