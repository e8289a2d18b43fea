// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package signer

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// TestControlFile: the control file carries the keys the program (hack/labbin/signer, whose
// decoder refuses unknown fields) reads, and Set replaces it whole.
func TestControlFile(t *testing.T) {
	dir := t.TempDir()
	s := &Signer{name: "signer-1", dir: dir}
	c := ForKey("/lab/sa/sa.key")
	c.Keys = append(c.Keys, Key{File: "/lab/sa/old.pub", ExcludeFromOIDCDiscovery: true})
	c.Fail.FetchKeys = "key store unreachable"
	if err := s.Set(c); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.ControlFile())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"fail":{"fetchKeys":"key store unreachable"},"keys":[{"file":"/lab/sa/sa.key"},{"excludeFromOIDCDiscovery":true,"file":"/lab/sa/old.pub"}],"maxTokenExpirationSeconds":86400,"refreshHintSeconds":60}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("control file = %s\nwant %s", b, want)
	}
	if err := s.Update(func(c *Control) { c.Fail = Failures{} }); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(s.ControlFile())
	if strings.Contains(string(data), "fail") {
		t.Errorf("control file after Update keeps the failure: %s", data)
	}
	if _, err := os.Stat(s.ControlFile() + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary control file left behind: %v", err)
	}
}

// TestStartRefusesLongSocketPath: a socket path longer than sun_path is named before anything runs.
func TestStartRefusesLongSocketPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	launched := false
	_, err := Start(context.Background(), "signer-1", dir, ForKey("k"), func([]string, string) (*proc.Proc, error) {
		launched = true
		return nil, nil
	}, time.Second)
	if err == nil || !strings.Contains(err.Error(), "use a shorter lab directory") || launched {
		t.Errorf("Start with a long directory = %v (launched %v)", err, launched)
	}
}
