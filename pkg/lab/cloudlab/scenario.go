// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/lab"
)

// Name is the scenario's name.
const Name = "cloud-password-rotated"

// Namespace holds the scenario's Deployments.
const Namespace = "rotation"

// Account is the cloud's side of the scenario: the service account the cluster was deployed
// with, on vCenter (VCenter) or Keystone (Keystone).
type Account interface {
	// Cloud names the service ("vCenter", "Keystone").
	Cloud() string
	// Rotate changes the account's password, as the directory's rotation policy does.
	Rotate(ctx context.Context, newPassword string) error
	// EndSessions ends the account's sessions (what an idle timeout does) and says what it ended.
	EndSessions(ctx context.Context) (string, error)
	// Logins are the account's login attempts so far, accepted and rejected.
	Logins() (accepted, rejected int)
}

// Env is what the scenario runs on: a lab with nodes whose cloud controller logs in to Account.
type Env struct {
	Lab     *lab.Lab
	Account Account
	// Era is "in-tree" or "external".
	Era string
	// Controller names the component that holds the cloud session ("kube-controller-manager" or
	// "cloud-controller-manager"); ControllerLog is its log (a glob: a Pod's logs across restarts);
	// RestartController restarts it.
	Controller        string
	ControllerLog     string
	RestartController func(ctx context.Context) error
	// ControllerStatus, when set, says after a step that restarted the controller how it runs
	// ("healthy", or what its Pods' containers are waiting on); else the restart's own result is
	// recorded.
	ControllerStatus func(ctx context.Context) string
	// Restore puts password back where the era keeps the credential (files or Secret).
	Restore func(ctx context.Context, password string) error
	// AfterStep, when set, runs after each step's evidence is recorded (e.g. credwatch check on
	// the lab as the step left it).
	AfterStep func(ctx context.Context, step string) error
	// Await holds, by step name, what the era's step also waits for after its window (its own
	// evidence: a BackOff Warning, a crash loop), until it holds or a minute passes: a loaded
	// machine is slower than any fixed window.
	Await map[string]func(ctx context.Context) bool
	// Zones says the kubelets read their node's zone from the cloud whenever they build their
	// Node object (the in-tree provider with [Labels]): a kubelet without a Node object to fall
	// back on cannot start while the logins are rejected, so the node that joins after the
	// sessions ended is not waited for (its kubelet's service keeps starting it again), and the
	// restarted kubelet of a registered node is waited for until it starts, not until it is Ready.
	Zones bool
	// Check runs credwatch check (without cloud logins) after each step and records its findings
	// in the step's evidence.
	Check bool
	// CloudConfigs are host files (the in-tree era's cloud_config of the controller and of each
	// node): with Check, credwatch cloud --config runs on them after each step too, logging in,
	// reading the host's processes, and its findings and the consumers it names are recorded.
	CloudConfigs []string
	// Secrets are the era's passwords besides the scenario's own (DefaultPassword, NewPassword):
	// whoever prints the run's output redacts them.
	Secrets []string
	// Window is how long each step watches (default 15 s).
	Window time.Duration
	Log    io.Writer
}

// registrationRetry is the v1.29 kubelet's line when it cannot build its Node object to register
// (pkg/kubelet/kubelet_node_status.go): it retries, at most every 7 s.
const registrationRetry = "Unable to construct v1.Node object for kubelet"

// controllerLoginFailure is what the in-tree provider logs when vCenter rejects its login
// (legacy-cloud-providers vsphere/nodemanager.go, with the simulator's fault text).
const controllerLoginFailure = "Cannot connect to vCenter with err: ServerFaultCode: Login failure"

// NewPassword is the password the scenario rotates to.
const NewPassword = "rotated-Passw0rd-2"

func (e *Env) logf(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, "cloud-password-rotated: "+format+"\n", args...)
	}
}

func (e *Env) window() time.Duration {
	if e.Window <= 0 {
		return 15 * time.Second
	}
	return e.Window
}

// Run rotates the service account's password under the running lab and records, step by step,
// what the real components do: the rotation alone, the sessions ending, a Deployment and a node
// created after that, the controller's restart, a kubelet's restart (the report's reboot), and
// the fix (password restored where it is kept, consumers restarted). It returns the evidence
// gathered so far also on error.
func Run(ctx context.Context, e *Env) (*Evidence, error) {
	cs, err := kubernetes.NewForConfig(e.Lab.RESTConfig())
	if err != nil {
		return nil, err
	}
	ev := &Evidence{Scenario: Name, Era: e.Era}
	r := &runner{env: e, cs: cs, ev: ev}
	if err := r.ensureNamespace(ctx); err != nil {
		return ev, err
	}
	first, cloud := e.Lab.Nodes()[0].Name, e.Account.Cloud()
	var restarted time.Time // when the kubelet-restarted step restarted first's kubelet
	var firstLog logMark    // first's kubelet log as it was then
	var ctlLogs []logMark   // the controller's logs as they were when controller-restarted began
	steps := []struct {
		name, action string
		do           func(ctx context.Context, s *Step) error
		until        func(ctx context.Context) bool
	}{
		{"before", "a Deployment on the running cluster", func(ctx context.Context, s *Step) error {
			return r.createDeployment(ctx, "before", "")
		}, r.settled},
		{"rotated", "the service account's password is changed on " + cloud + "; get and delete through the API; a new Deployment",
			func(ctx context.Context, s *Step) error {
				if err := e.Account.Rotate(ctx, NewPassword); err != nil {
					return err
				}
				s.GetDelete = r.getDelete(ctx, "before")
				return r.createDeployment(ctx, "rotated", "")
			}, r.settled},
		{"sessions-ended", cloud + " ends the account's sessions (idle timeout); a new Deployment; a node joins, and a Deployment pinned to it",
			func(ctx context.Context, s *Step) error {
				ended, err := e.Account.EndSessions(ctx)
				if err != nil {
					return err
				}
				s.Sessions = ended
				e.logf("sessions: %s", ended)
				if err := r.createDeployment(ctx, "after-expiry", ""); err != nil {
					return err
				}
				join := e.Lab.AddNode
				if e.Zones {
					join = e.Lab.StartNode
				}
				st, err := join(ctx)
				if err != nil {
					return fmt.Errorf("add node: %w", err)
				}
				e.logf("%s joined", st.Name)
				return r.createDeployment(ctx, "on-new-node", st.Name)
			}, nil},
		{"controller-restarted", "the cloud controller restarts (the master's reboot)", func(ctx context.Context, s *Step) error {
			ctlLogs = r.controllerMarks()
			s.Restarted = map[string]string{e.Controller: result(e.RestartController(ctx))}
			return nil
		}, func(ctx context.Context) bool {
			// With zones, the crash-looping kubelet of the new node logs in at every start: a login
			// attempt no longer says that the controller tried. Wait for the controller's own.
			if e.Zones {
				return loggedSince(ctlLogs, controllerLoginFailure)
			}
			return r.loginAttempted(ctx)
		}},
		{"kubelet-restarted", "the kubelet of " + first + " restarts (the node's reboot)", func(ctx context.Context, s *Step) error {
			restarted, firstLog = time.Now(), mark(e.Lab.Nodes()[0].Logs["kubelet"])
			if err := e.Lab.RestartKubelet(first); err != nil {
				return err
			}
			s.Restarted = map[string]string{"kubelet/" + first: ""}
			return nil
		}, func(ctx context.Context) bool {
			// With zones, the new kubelet of a registered node keeps running without ever posting
			// its status again: it retries its registration, which needs the zone.
			return r.readySince(ctx, first, restarted) ||
				e.Zones && logged(firstLog.file, firstLog.offset, registrationRetry)
		}},
		{"restored", "the password is put back where it is kept and every consumer restarts", func(ctx context.Context, s *Step) error {
			if err := e.Restore(ctx, NewPassword); err != nil {
				return err
			}
			// The kubelets first: a kubelet restarting while it starts the controller's new
			// container leaves that container failed (exit 128) on a loaded machine.
			s.Restarted = map[string]string{}
			for _, n := range e.Lab.Nodes() {
				if err := e.Lab.RestartKubelet(n.Name); err != nil {
					return err
				}
				s.Restarted["kubelet/"+n.Name] = ""
			}
			s.Restarted[e.Controller] = result(e.RestartController(ctx))
			return nil
		}, func(ctx context.Context) bool { return r.loginAccepted(ctx) && r.settled(ctx) }},
	}
	for _, st := range steps {
		if err := r.step(ctx, st.name, st.action, st.do, both(st.until, e.Await[st.name])); err != nil {
			return ev, fmt.Errorf("step %s: %w", st.name, err)
		}
		if e.AfterStep != nil {
			if err := e.AfterStep(ctx, st.name); err != nil {
				return ev, fmt.Errorf("after step %s: %w", st.name, err)
			}
		}
	}
	return ev, nil
}

// both holds when a and b hold; a nil condition is none.
func both(a, b func(context.Context) bool) func(context.Context) bool {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(ctx context.Context) bool { return a(ctx) && b(ctx) }
}

func result(err error) string {
	if err != nil {
		return "failed: " + err.Error()
	}
	return "healthy"
}
