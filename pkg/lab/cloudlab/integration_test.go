package cloudlab_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/cloudlab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

const (
	user     = "k8s-vcp@vsphere.local"
	password = "Initial-Passw0rd-1"
)

// shortDir keeps the nodes' containerd socket paths under the 104-byte limit.
func shortDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "cloudlab")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// runScenario runs cloud-password-rotated on l and logs (and with CREDWATCH_EVIDENCE_DIR, writes)
// the evidence.
func runScenario(t *testing.T, env *cloudlab.Env) *cloudlab.Evidence {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	ev, err := cloudlab.Run(ctx, env)
	t.Logf("scenario %s (%s era) took %s", cloudlab.Name, env.Era, time.Since(start).Round(100*time.Millisecond))
	if ev != nil {
		data, _ := json.MarshalIndent(ev, "", "  ")
		t.Logf("evidence:\n%s", data)
		if d := os.Getenv("CREDWATCH_EVIDENCE_DIR"); d != "" {
			_ = os.WriteFile(filepath.Join(d, cloudlab.Name+"-"+env.Era+".json"), append(data, '\n'), 0o644)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestIntegrationCloudRotatedInTree(t *testing.T) {
	setup := &cloudlab.Setup{Dir: t.TempDir(), Nodes: cloudlab.NodeNames(2), User: user, Password: password}
	t.Cleanup(setup.Close)
	l := labtest.Start(t, lab.Options{Dir: shortDir(t), Members: 1, Nodes: 1, Cloud: setup.InTree()})
	env := &cloudlab.Env{
		Lab: l, Setup: setup, Era: "in-tree", Controller: "kube-controller-manager",
		ControllerLog: l.ControllerManagerLogFile(),
		RestartController: func(ctx context.Context) error {
			if err := l.StopControllerManager(ctx); err != nil {
				return err
			}
			return l.StartControllerManager(ctx)
		},
		Restore: func(_ context.Context, pw string) error { return setup.WriteInTreeConfigs(pw) },
		Log:     testLog{t},
	}
	ev := runScenario(t, env)
	_ = ev
}

func TestIntegrationCloudRotatedExternal(t *testing.T) {
	setup := &cloudlab.Setup{Dir: t.TempDir(), Nodes: cloudlab.NodeNames(2), User: user, Password: password}
	t.Cleanup(setup.Close)
	l := labtest.Start(t, lab.Options{Dir: shortDir(t), Members: 1, Nodes: 1, Cloud: setup.External()})
	cs := kubernetes.NewForConfigOrDie(l.RESTConfig())
	env := &cloudlab.Env{
		Lab: l, Setup: setup, Era: "external", Controller: "cloud-controller-manager",
		ControllerLog: l.CloudControllerManagerLogFile(),
		RestartController: func(ctx context.Context) error {
			l.StopCloudControllerManager()
			return l.StartCloudControllerManager(ctx, setup.CPIConfigFile())
		},
		Restore: func(ctx context.Context, pw string) error { return setup.WriteSecret(ctx, cs, pw) },
		Log:     testLog{t},
	}
	ev := runScenario(t, env)
	_ = ev
}
