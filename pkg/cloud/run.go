package cloud

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/report"
)

// Options configure Run.
type Options struct {
	// Configs were read with --config; ConfigErrors are the paths that could not be read or parsed.
	Configs      []*Config
	ConfigErrors []error
	// Client is the cluster; nil means configs only.
	Client  kubernetes.Interface
	NoLogin bool
	Login   LoginOptions
	// Timeout bounds each API call (default 10 s).
	Timeout time.Duration
	Now     time.Time
	FailOn  catalogue.Severity
}

// Report is the result of `credwatch cloud`.
type Report struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Time       time.Time `json:"time"`
	Inventory
	// Login says how live logins were made (or that --no-login skipped them).
	Login         string            `json:"login"`
	LoginAttempts int               `json:"loginAttempts"`
	Findings      []finding.Finding `json:"findings"`
	// BadInput: a --config path could not be read or parsed (exit code 2 when nothing worse).
	BadInput    bool               `json:"badInput,omitempty"`
	InputErrors []string           `json:"inputErrors,omitempty"`
	FailOn      catalogue.Severity `json:"-"`

	byCase map[string][]finding.Finding
	order  []string
}

// Run finds, tests and judges the credentials, then reads the cluster's symptoms.
func Run(ctx context.Context, o Options) *Report {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	r := &Report{APIVersion: report.APIVersion, Kind: "CloudReport", Time: o.Now.UTC(), FailOn: o.FailOn, byCase: map[string][]finding.Finding{}}
	inv := Discover(ctx, o.Client, DiscoverOptions{Local: o.Configs, Timeout: o.Timeout})
	r.Inventory = *inv
	for _, err := range o.ConfigErrors {
		r.BadInput = true
		r.InputErrors = append(r.InputErrors, err.Error())
	}
	tester := NewTester(o.Login)
	if o.NoLogin {
		r.Login = "--no-login: no live login was attempted"
	} else {
		r.Login = tester.Policy()
	}
	// Newest copies first: after a rotation the most recently changed copy is the likeliest to be
	// right, and testing it first keeps a stale copy's rejection from using up the account's one
	// allowed failure.
	order := make([]int, len(r.Items))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ca, cb := r.Items[order[a]].Source.Changed, r.Items[order[b]].Source.Changed
		return ca != nil && (cb == nil || ca.After(*cb))
	})
	for _, i := range order {
		it := &r.Items[i]
		if o.NoLogin {
			it.Test = TestResult{Verdict: NotTested, Detail: "--no-login"}
		} else {
			it.Test = tester.Test(ctx, it.Credential)
		}
		it.decideAction()
	}
	for i := range r.Items {
		r.add(caseName(&r.Items[i]), itemFindings(&r.Items[i])...)
	}
	r.LoginAttempts = tester.Attempts()
	for _, p := range r.Problems {
		r.add("inputs", finding.New(IDConfigInvalid, p.Input+": "+p.Message).On("", p.Input))
	}
	if o.Client != nil {
		fs, errs := Symptoms(ctx, o.Client, r.Components, o.Now, o.Timeout)
		r.add("symptoms", fs...)
		for _, err := range errs {
			r.Partial = true
			r.Errors = append(r.Errors, err.Error())
		}
	}
	finding.Sort(r.Findings)
	if r.Findings == nil {
		r.Findings = []finding.Finding{}
	}
	if r.Items == nil {
		r.Items = []Item{}
	}
	return r
}

func caseName(it *Item) string {
	return fmt.Sprintf("%s %s (%s)", it.Provider, it.Account(), it.Source)
}

func (r *Report) add(name string, fs ...finding.Finding) {
	if _, ok := r.byCase[name]; !ok {
		r.order = append(r.order, name)
	}
	r.byCase[name] = append(r.byCase[name], fs...)
	r.Findings = append(r.Findings, fs...)
}

func providerName(p Provider) string {
	if p == VSphere {
		return "vCenter"
	}
	return "Keystone"
}

func itemFindings(it *Item) []finding.Finding {
	var out []finding.Finding
	obj := it.Source.String()
	ev := []finding.Evidence{{Object: obj, Key: "account", Value: it.Account()}}
	if it.Config != nil {
		ev = append(ev, finding.Evidence{Object: obj, Key: "named by", Value: it.Config.String()})
	}
	for _, c := range it.Consumers {
		ev = append(ev, finding.Evidence{Member: c.Node, Object: c.Pod, Key: "consumer " + c.Component, Value: c.How})
	}
	if it.Insecure {
		ev = append(ev, finding.Evidence{Object: obj, Key: "tls", Value: "not verified (the config's insecure flag)"})
	}
	switch it.Test.Verdict {
	case Rejected:
		f := finding.New(IDRejected, fmt.Sprintf("%s rejected %s (%s) from %s: %s. %s",
			providerName(it.Provider), it.Account(), it.Test.Fault, obj, it.Test.Detail, capitalize(it.Action)), ev...)
		out = append(out, f.On("", obj))
	case Unreachable:
		f := finding.New(IDUnreachable, fmt.Sprintf("%s %s could not be tested (%s): %s", providerName(it.Provider), it.Account(), orDash(it.Test.Fault), it.Test.Detail), ev...)
		out = append(out, f.On("", obj))
	}
	for _, c := range it.Consumers {
		if !c.Stale {
			continue
		}
		changed := "-"
		if it.Source.Changed != nil {
			changed = it.Source.Changed.UTC().Format(time.RFC3339)
		}
		f := finding.New(IDConsumerStale, fmt.Sprintf("%s %s started %s, before %s last changed (%s); it reads the credential only at start-up: restart it: %s",
			c.Component, c.Pod, c.Started.UTC().Format(time.RFC3339), obj, changed, c.Restart),
			finding.Evidence{Member: c.Node, Object: c.Pod, Key: "started", Value: c.Started.UTC().Format(time.RFC3339)},
			finding.Evidence{Object: obj, Key: "changed", Value: changed},
			finding.Evidence{Object: c.Pod, Key: "restart", Value: c.Restart})
		out = append(out, f.On(c.Node, c.Pod))
	}
	return out
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
