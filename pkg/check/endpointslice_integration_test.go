// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/credwatch/credwatch/internal/cli"
	cmdcheck "github.com/credwatch/credwatch/internal/cmd/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// TestIntegrationCheckEndpointSlice runs `credwatch check` with nothing but the lab's admin
// kubeconfig: the members live on their own network hosts, so the kubernetes EndpointSlice lists
// them and check must find every one of them there, including one that joins later.
func TestIntegrationCheckEndpointSlice(t *testing.T) {
	l := labtest.Start(t, lab.Options{Members: 3, Network: lab.NetworkHosts})
	run := func(t *testing.T, want int) {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := cmdcheck.NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		cmd.SetArgs([]string{"--kubeconfig", l.AdminKubeconfig(), "--create-probe-sa", "-o", "json"})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		err := cmd.ExecuteContext(context.Background())
		if code := cli.Code(err); code != cli.ExitOK {
			t.Errorf("exit %d (%v); stderr:\n%s\nstdout:\n%s", code, err, errOut.String(), out.String())
		}
		var doc struct {
			Members []struct {
				URL     string   `json:"url"`
				FoundBy []string `json:"foundBy"`
			} `json:"members"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("json: %v\n%s", err, out.String())
		}
		var urls []string
		for _, m := range doc.Members {
			if slices.Contains(m.FoundBy, "endpointslice") {
				urls = append(urls, m.URL)
			}
		}
		var lab []string
		for _, m := range l.Members() {
			lab = append(lab, m.URL)
		}
		slices.Sort(urls)
		slices.Sort(lab)
		if len(urls) != want || !slices.Equal(urls, lab) {
			t.Errorf("members found through the EndpointSlice: %v, want the lab's %v", urls, lab)
		}
	}
	labtest.WaitEndpointSlice(t, l, 3)
	t.Run("three", func(t *testing.T) { run(t, 3) })
	t.Run("joined", func(t *testing.T) {
		if _, err := l.AddMember(context.Background(), lab.MemberOptions{}); err != nil {
			t.Fatal(err)
		}
		labtest.WaitEndpointSlice(t, l, 4)
		run(t, 4)
	})
}
