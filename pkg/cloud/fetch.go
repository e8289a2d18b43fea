// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"sort"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/liveness"
)

// FetchOptions say what Fetch reads and whether it logs in.
type FetchOptions struct {
	// Configs were read with --config; ConfigErrors are the paths that could not be read or parsed.
	Configs      []*Config
	ConfigErrors []error
	// Client is the cluster; nil means configs only.
	Client kubernetes.Interface
	// NoLogin tests no credential; NoLoginDetail is then the untested verdicts' detail (default
	// "--no-login") and NoLoginNote the report's login line.
	NoLogin                    bool
	NoLoginDetail, NoLoginNote string
	Login                      LoginOptions
	// Health also reads the controllers' leases and the nodes' cloud taint. `credwatch check`
	// leaves it off: its own controllers and nodes checks read them.
	Health bool
	// Timeout bounds each API call (default 10 s).
	Timeout time.Duration
	Now     time.Time
	// Host says how to find the host's processes that read the Configs (Discover's Processes,
	// LoopWait and Progress; its other fields are set from these options).
	Host DiscoverOptions
}

// Observation is everything Fetch read, the input of Judge: the inventory with each credential's
// login verdict, the controllers' cloud errors and, with Health, their leases and the nodes.
type Observation struct {
	Time time.Time
	Inventory
	Login         string
	LoginAttempts int
	InputErrors   []string
	Controllers   []ControllerLog
	Leases        []liveness.Status // nil without Health
	Nodes         *NodeTaints       // nil without Health, or when the nodes could not be listed
}

// Fetch does all of cloud's I/O once: it discovers the credentials, logs in with each (unless
// NoLogin), and reads the cluster's symptoms. Read failures are in Inventory.Errors (Partial).
func Fetch(ctx context.Context, o FetchOptions) *Observation {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	obs := &Observation{Time: o.Now.UTC(), Inventory: *Discover(ctx, o.Client, DiscoverOptions{Local: o.Configs, Timeout: o.Timeout,
		Processes: o.Host.Processes, LoopWait: o.Host.LoopWait, Progress: o.Host.Progress})}
	for _, err := range o.ConfigErrors {
		obs.InputErrors = append(obs.InputErrors, err.Error())
	}
	tester := NewTester(o.Login)
	obs.Login = tester.Policy()
	if o.NoLogin {
		obs.Login = orDefault(o.NoLoginNote, "--no-login: no live login was attempted")
	}
	// Newest copies first: after a rotation the most recently changed copy is the likeliest to be
	// right, and testing it first keeps a stale copy's rejection from using up the account's one
	// allowed failure.
	order := make([]int, len(obs.Items))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ca, cb := obs.Items[order[a]].Source.Changed, obs.Items[order[b]].Source.Changed
		return ca != nil && (cb == nil || ca.After(*cb))
	})
	for _, i := range order {
		if o.NoLogin {
			obs.Items[i].Test = TestResult{Verdict: NotTested, Detail: orDefault(o.NoLoginDetail, "--no-login")}
		} else {
			obs.Items[i].Test = tester.Test(ctx, obs.Items[i].Credential)
		}
	}
	obs.LoginAttempts = tester.Attempts()
	if o.Client != nil {
		errs := obs.readSymptoms(ctx, o.Client, o.Health, o.Timeout)
		for _, err := range errs {
			obs.Partial = true
			obs.Errors = append(obs.Errors, err.Error())
		}
	}
	return obs
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
