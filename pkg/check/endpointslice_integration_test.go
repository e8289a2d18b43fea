package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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
	waitSlice(t, l, 3)
	t.Run("three", func(t *testing.T) { run(t, 3) })
	t.Run("joined", func(t *testing.T) {
		if _, err := l.AddMember(context.Background(), lab.MemberOptions{}); err != nil {
			t.Fatal(err)
		}
		waitSlice(t, l, 4)
		run(t, 4)
	})
}

// waitSlice waits (up to 60 s) until the kubernetes EndpointSlice lists want addresses: a member
// writes itself there shortly after it is ready.
func waitSlice(t *testing.T, l *lab.Lab, want int) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(l.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var got int
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		es, err := cs.DiscoveryV1().EndpointSlices("default").Get(context.Background(), "kubernetes", metav1.GetOptions{})
		if err != nil {
			continue
		}
		got = 0
		for _, ep := range es.Endpoints {
			got += len(ep.Addresses)
		}
		if got == want {
			return
		}
	}
	t.Fatalf("the kubernetes EndpointSlice lists %d addresses after 60 s, want %d", got, want)
}
