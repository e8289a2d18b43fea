// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/internal/cli"
	cmdcheck "github.com/credwatch/credwatch/internal/cmd/check"
	cmdcloud "github.com/credwatch/credwatch/internal/cmd/cloud"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/cloudlab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

const (
	user     = cloudlab.DefaultUser
	password = cloudlab.DefaultPassword
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
	// Zones: kubespray's [Labels] in every cloud_config, the simulator's hosts and datacenter
	// tagged: each kubelet reads its node's zone from vCenter when it builds its Node object.
	setup := &cloudlab.Setup{Dir: t.TempDir(), Nodes: cloudlab.NodeNames(2), User: user, Password: password, Zones: true}
	t.Cleanup(setup.Close)
	// One line throughout, as the report ran it: apiserver, controller manager, scheduler, kubelet
	// and kube-proxy of v1.29, the apiserver too with --cloud-provider=vsphere --cloud-config; the
	// kubelets run as kubelet.service runs them (Restart=always, RestartSec=10).
	l := labtest.Start(t, lab.Options{Dir: shortDir(t), Version: lab.InTreeCloudVersion, Members: 1, Nodes: 1, Cloud: setup.InTree(),
		KubeletRestart: cloudlab.KubeletServiceRestart})
	if args := strings.Join(l.Members()[0].Args, " "); !strings.Contains(args, "--cloud-provider=vsphere --cloud-config="+setup.ControllerConfig()) {
		t.Errorf("the v1.29 apiserver is not started with the in-tree provider's flags: %s", args)
	}
	env := cloudlab.InTreeEnv(l, setup)
	env.Log, env.Window = testLog{t}, 8*time.Second
	checks, files := map[string]checkReport{}, map[string]checkReport{}
	env.AfterStep = func(_ context.Context, step string) error {
		if step == "sessions-ended" || step == "kubelet-restarted" || step == "restored" {
			checks[step] = credwatchCheck(t, l)
		}
		if step == "kubelet-restarted" || step == "restored" {
			// What check cannot see here (the controller manager and kubelets are host
			// processes), `credwatch cloud --config` tests on the host, as on a kubespray node.
			files[step] = credwatchCloud(t, l, setup.ControllerConfig(), setup.NodeConfig("node-1"), setup.NodeConfig("node-2"))
		}
		return nil
	}
	ev := runScenario(t, env)
	c := checker{t, ev}
	c.common("kube-controller-manager")
	// On the healthy lab the kubelet labels its Node with the region and zone of its VM's tags.
	s := c.step("before")
	n, _ := s.Node("node-1")
	c.want(s, n.Region == cloudlab.Region && n.Zone == cloudlab.Zone, "node-1 labelled with the simulator's region and zone: %+v", n)
	// The node that joins after the sessions ended has no Node object to fall back on: its kubelet
	// asks vCenter for the zone at start-up, the login is rejected, it exits, and its service
	// starts it again: the crash loop. No Node is ever registered, so the Pod pinned to it is
	// Pending.
	s = c.step("sessions-ended")
	if _, ok := s.Node("node-2"); ok {
		t.Errorf("step sessions-ended: node-2 registered a Node although its kubelet cannot read its zone")
	}
	c.want(s, s.Restarts["kubelet/node-2"] >= cloudlab.CrashLoopRestarts, "node-2's kubelet started again ≥ %d times (got %d)",
		cloudlab.CrashLoopRestarts, s.Restarts["kubelet/node-2"])
	c.want(s, s.Has("kubelet/node-2", `"Kubelet failed to get node info" err="failed to get zone from cloud provider: ServerFaultCode: Login failure"`),
		"node-2's kubelet logs the rejected login as it exits")
	c.want(s, c.pods(s, "on-new-node", "Pending"), "the Deployment pinned to the new node stays Pending")
	// A registered node's kubelet, restarted, does not exit: it finds its Node in its informer's
	// cache, runs its Pods, and retries its registration, which needs the zone, forever; it never
	// posts its status again (the Ready condition the API shows is the old kubelet's).
	s = c.step("kubelet-restarted")
	c.want(s, s.Has("kubelet/node-1", `"Unable to construct v1.Node object for kubelet" err="failed to get zone from cloud provider: ServerFaultCode: Login failure"`),
		"the restarted kubelet retries its registration, its zone login rejected")
	c.want(s, s.Restarts["kubelet/node-2"] > 0, "node-2's kubelet is still being started again (got %d)", s.Restarts["kubelet/node-2"])
	// The restarted controller manager logs in at start-up (registering node-1) and is rejected.
	s = c.step("controller-restarted")
	c.want(s, s.Has("kube-controller-manager", "Cannot connect to vCenter with err: ServerFaultCode: Login failure"),
		"the restarted controller manager logs its rejected login")
	// The fix: node-2 registers, labelled, and runs its Pod.
	s = c.step("restored")
	n, _ = s.Node("node-2")
	c.want(s, n.Ready && n.Zone == cloudlab.Zone && strings.HasPrefix(n.ProviderID, "vsphere://"), "node-2 Ready, with its zone and providerID: %+v", n)
	c.want(s, c.pods(s, "on-new-node", "Running"), "the Deployment pinned to the new node runs")
	// credwatch cloud on the host's files: both rejected, then valid after the fix.
	if ids := files["kubelet-restarted"].ids(); ids["cloud-credential-rejected"] == "" || !strings.Contains(ids["cloud-credential-rejected"], "file "+setup.ControllerConfig()) {
		t.Errorf("credwatch cloud --config on the rotated files: no cloud-credential-rejected naming %s: %v", setup.ControllerConfig(), ids)
	}
	// ... and names the kubelets that read them: node-2's restarting in a loop on the rejected
	// credential, node-1's running on it.
	if msg := files["kubelet-restarted"].ids()["kubelet-crashloop"]; !strings.Contains(msg, "of node node-2 with --cloud-config "+setup.NodeConfig("node-2")) ||
		!strings.Contains(msg, "vCenter rejects") {
		t.Errorf("credwatch cloud --config on the rotated files: no kubelet-crashloop naming node-2's kubelet and the rejected credential: %q", msg)
	}
	if ids := files["restored"].ids(); ids["cloud-credential-rejected"] != "" {
		t.Errorf("credwatch cloud --config after the fix still reports cloud-credential-rejected: %s", ids["cloud-credential-rejected"])
	}
	// No node is tainted in this era, so check has no uninitialized nodes to report.
	if _, ok := checks["kubelet-restarted"].ids()["nodes-uninitialized"]; ok {
		t.Errorf("credwatch check on the in-tree lab reports nodes-uninitialized; no node is tainted in this era")
	}
	// check names the crash loop from the kubelet's Starting Events, while it lasts: node-2 only
	// (node-1's kubelet started twice, and keeps running).
	for _, step := range []string{"sessions-ended", "kubelet-restarted"} {
		msg := checks[step].ids()["kubelet-crashloop"]
		if !strings.Contains(msg, "node node-2") || !strings.Contains(msg, "never registered its Node") {
			t.Errorf("credwatch check after step %s: no kubelet-crashloop naming node-2: %q", step, msg)
		}
	}
	if msg, ok := checks["restored"].ids()["kubelet-crashloop"]; ok {
		t.Errorf("credwatch check after the fix still reports kubelet-crashloop: %s", msg)
	}
}

// checker asserts the evidence of one run.
type checker struct {
	t  *testing.T
	ev *cloudlab.Evidence
}

func (c checker) step(name string) cloudlab.Step {
	s, ok := c.ev.Step(name)
	if !ok {
		c.t.Fatalf("no step %s in the evidence", name)
	}
	return s
}

func (c checker) want(s cloudlab.Step, ok bool, format string, args ...any) {
	c.t.Helper()
	if !ok {
		c.t.Errorf("step %s: want "+format, append([]any{s.Name}, args...)...)
	}
}

func (c checker) pods(s cloudlab.Step, deployment, phase string) bool {
	w, ok := s.Workload(deployment)
	return ok && len(w.Pods) == 1 && w.Pods[phase] == 1
}

// warningAbout reports whether an Event of type Warning mentions sub.
func warningAbout(s cloudlab.Step, sub string) bool {
	for _, e := range s.Events {
		if strings.HasPrefix(e.Message, "Warning") && strings.Contains(e.Message, sub) {
			return true
		}
	}
	return false
}

// untilLogin are the observations every run shares up to the first login after the rotation:
// the rotation alone changes nothing (vCenter's sessions are still valid, Keystone's revoked
// tokens are not used yet: nobody logs in); the next login is rejected, and Pods on initialized
// nodes are still created.
func (c checker) untilLogin() {
	s := c.step("before")
	c.want(s, c.pods(s, "before", "Running"), "the first Deployment's Pod runs")
	s = c.step("rotated")
	c.want(s, s.GetDelete == "ok", "get and delete work (got %q)", s.GetDelete)
	c.want(s, c.pods(s, "rotated", "Running"), "a Deployment created after the rotation gets a running Pod")
	c.want(s, s.LoginsAccepted+s.LoginsRejected == 0, "no login after the rotation alone (got %d/%d)", s.LoginsAccepted, s.LoginsRejected)
	s = c.step("sessions-ended")
	c.want(s, s.LoginsRejected > 0 && s.LoginsAccepted == 0, "rejected logins only (got %d accepted, %d rejected)", s.LoginsAccepted, s.LoginsRejected)
	c.want(s, c.pods(s, "after-expiry", "Running"), "a Deployment created after the sessions ended still gets a running Pod")
}

// common are the observations both vSphere eras share.
func (c checker) common(controller string) {
	c.untilLogin()
	// No Event mentions the login.
	s := c.step("sessions-ended")
	c.want(s, !warningAbout(s, "Login failure") && !warningAbout(s, "vCenter"), "no Warning Event about the login")
	s = c.step("controller-restarted")
	c.want(s, s.Restarted[controller] == "healthy", "the restarted %s comes up healthy (got %q)", controller, s.Restarted[controller])
	c.want(s, s.LoginsRejected > 0, "its login is rejected again")
	s = c.step("kubelet-restarted")
	c.want(s, s.Restarted["kubelet/node-1"] == "running", "the restarted kubelet keeps running (got %q)", s.Restarted["kubelet/node-1"])
	n, _ := s.Node("node-1")
	c.want(s, n.Ready, "node-1 is Ready again")
	s = c.step("restored")
	c.want(s, s.LoginsAccepted > 0, "the restarted consumers log in with the restored password")
	for _, n := range s.Nodes {
		c.want(s, n.Ready && !n.Uninitialized, "%s Ready and initialized: %+v", n.Name, n)
	}
}

func TestIntegrationCloudRotatedExternal(t *testing.T) {
	setup := &cloudlab.Setup{Dir: t.TempDir(), Nodes: cloudlab.NodeNames(2), User: user, Password: password}
	t.Cleanup(setup.Close)
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	binDir, _ := labtest.BinDir()
	img, err := cloudlab.CCMImageTarball(binDir, setup.Dir)
	if err != nil {
		t.Fatal(err)
	}
	l := labtest.Start(t, lab.Options{Dir: shortDir(t), Members: 1, Nodes: 1, Cloud: setup.External(), ExtraImages: []string{img}})
	env, reports := externalEnv(t, l, "external", cloudlab.CCMName, setup.VC, setup.WriteSecret)
	ev := runScenario(t, env)
	c := checker{t, ev}
	c.common("cloud-controller-manager")
	// The node that joins after the sessions ended stays tainted; a Pod that can only go there
	// stays Pending; the scheduler's Warning names the taint, nothing names the login.
	s := c.step("sessions-ended")
	n, _ := s.Node("node-2")
	c.want(s, n.Ready && n.Uninitialized && n.ProviderID == "", "node-2 Ready but uninitialized, without providerID: %+v", n)
	c.want(s, c.pods(s, "on-new-node", "Pending"), "the Deployment pinned to the new node stays Pending")
	c.want(s, warningAbout(s, "untolerated taint"), "a FailedScheduling Warning names the untolerated taint")
	c.want(s, s.Has("cloud-controller-manager", "error syncing 'node-2': failed to get instance metadata for node node-2: ServerFaultCode: Login failure, requeuing"),
		"the node controller logs the failed initialisation and requeues")
	// Restoring the Secret (and restarting) initializes it, with a Synced Event.
	s = c.step("restored")
	c.want(s, c.pods(s, "on-new-node", "Running"), "the pinned Pod runs once node-2 is initialized")
	c.want(s, hasEvent(s, "Normal Node Synced: Node synced successfully"), "Synced is recorded on success")

	// credwatch check on the rotated lab (before and after the restarts), then after the fix.
	wantBeforeAndAfterReboot(t, reports, "cloud-credential-rejected", "nodes-uninitialized")
	// ... and names the cloud controller manager's DaemonSet as the consumer to restart.
	if r := reports["kubelet-restarted"]; !r.restarts("rollout restart daemonset/" + cloudlab.CCMName) {
		t.Errorf("credwatch check on the rotated lab names no restart of daemonset/%s", cloudlab.CCMName)
	}
}

// externalEnv is the scenario's Env for an external era whose cloud controller manager is the
// DaemonSet ccm, and the credwatch check reports it gathers after the kubelet's restart and after
// the fix.
func externalEnv(t *testing.T, l *lab.Lab, era, ccm string, acct cloudlab.Account,
	writeSecret func(context.Context, kubernetes.Interface, string) error) (*cloudlab.Env, map[string]checkReport) {
	env, err := cloudlab.ExternalEnv(l, era, ccm, acct, writeSecret)
	if err != nil {
		t.Fatal(err)
	}
	return env, withChecks(t, l, env)
}

// withChecks has env log to the test, watch 8 s a step and run credwatch check after the steps
// the tests assert on; the reports are filled in as the scenario runs.
func withChecks(t *testing.T, l *lab.Lab, env *cloudlab.Env) map[string]checkReport {
	env.Log, env.Window = testLog{t}, 8*time.Second
	reports := map[string]checkReport{}
	env.AfterStep = func(_ context.Context, step string) error {
		if step == "sessions-ended" || step == "kubelet-restarted" || step == "restored" {
			reports[step] = credwatchCheck(t, l)
		}
		return nil
	}
	return reports
}

// wantBeforeAndAfterReboot asserts that credwatch check reported ids on the rotated lab, before
// the restarts (after sessions-ended) and after them (kubelet-restarted), and none after the fix.
func wantBeforeAndAfterReboot(t *testing.T, reports map[string]checkReport, ids ...string) {
	t.Helper()
	for _, step := range []string{"sessions-ended", "kubelet-restarted"} {
		got := reports[step].ids()
		for _, id := range ids {
			if _, ok := got[id]; !ok {
				t.Errorf("credwatch check after step %s: no %s in %v", step, id, got)
			}
		}
		// The Pod pinned to the uninitialized node is named as Pending behind the taint.
		if msg, ok := got["nodes-uninitialized"]; ok && !strings.Contains(msg, "1 Pod(s) are Pending because of it") {
			t.Errorf("credwatch check after step %s: nodes-uninitialized names no Pending Pod: %s", step, msg)
		}
	}
	fixed := reports["restored"].ids()
	for _, id := range ids {
		if _, ok := fixed[id]; ok {
			t.Errorf("credwatch check after the fix still reports %s: %s", id, fixed[id])
		}
	}
}

func (r checkReport) restarts(sub string) bool {
	if r.Cloud == nil {
		return false
	}
	for _, c := range r.Cloud.Credentials {
		for _, cons := range c.Consumers {
			if strings.Contains(cons.Restart, sub) {
				return true
			}
		}
	}
	return false
}

func hasEvent(s cloudlab.Step, msg string) bool {
	for _, e := range s.Events {
		if e.Message == msg {
			return true
		}
	}
	return false
}

// checkReport is the part of `credwatch check -o json` the tests read.
type checkReport struct {
	Findings []struct {
		ID      string `json:"id"`
		Message string `json:"message"`
	} `json:"findings"`
	Cloud *struct {
		Credentials []struct {
			Consumers []struct {
				Component string `json:"component"`
				Restart   string `json:"restart"`
			} `json:"consumers"`
			Test struct {
				Verdict string `json:"verdict"`
			} `json:"test"`
			Action string `json:"action"`
		} `json:"credentials"`
	} `json:"cloud"`
}

func (r checkReport) ids() map[string]string {
	out := map[string]string{}
	for _, f := range r.Findings {
		out[f.ID] = f.Message
	}
	return out
}

// credwatchCloud runs `credwatch cloud --config F... -o json` with the lab's kubeconfig.
func credwatchCloud(t *testing.T, l *lab.Lab, configs ...string) checkReport {
	t.Helper()
	args := []string{"--kubeconfig", l.AdminKubeconfig(), "-o", "json", "--fail-on", "critical"}
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	return runJSON(t, cmdcloud.NewCommand, "cloud", args)
}

// credwatchCheck runs `credwatch check -o json --cloud-login` against the lab's member.
func credwatchCheck(t *testing.T, l *lab.Lab) checkReport {
	t.Helper()
	args := []string{"--kubeconfig", l.AdminKubeconfig(), "-o", "json", "--cloud-login", "--fail-on", "critical"}
	for _, m := range l.Members() {
		args = append(args, "--endpoint", m.URL)
	}
	return runJSON(t, cmdcheck.NewCommand, "check", args)
}

// runJSON runs credwatch's command name with args and reads its -o json report.
func runJSON(t *testing.T, newCmd func(cli.Streams) *cobra.Command, name string, args []string) checkReport {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newCmd(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(context.Background())
	t.Logf("credwatch %s -> exit %d\nstderr:\n%s", name, cli.Code(err), errOut.String())
	var r checkReport
	if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil {
		t.Fatalf("credwatch %s -o json: %v (exit %d)\n%s", name, jerr, cli.Code(err), out.String())
	}
	t.Logf("credwatch %s findings: %v", name, r.ids())
	if r.Cloud != nil {
		data, _ := json.MarshalIndent(r.Cloud.Credentials, "", "  ")
		t.Logf("credwatch %s cloud credentials: %s", name, data)
	}
	return r
}
