// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"context"
	"fmt"
	"k8s.io/client-go/rest"
	"slices"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capilab"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/live"
)

// Prediction is what credwatch preflight, in live mode against the management lab, said of the
// roll before it started, beside what the roll then showed: issue 24's prediction meets outcome.
type Prediction struct {
	// Predicted are preflight's finding IDs for a roll of the spec the roll starts from.
	Predicted []string `json:"predicted"`
	// Observed are the IDs whose prediction the roll bore out, judged from its phases (see
	// observed); an ID preflight can predict but the roll gives no sign of is absent.
	Observed []string `json:"observed"`
	// Observable are the IDs the run can show or rule out; a predicted ID outside them is
	// neither confirmed nor contradicted.
	Observable []string `json:"observable"`
	// Error is why preflight could not predict ("" when it did).
	Error string `json:"error,omitempty"`
}

// Agrees reports whether every predicted ID the lab can observe was observed, and nothing was
// observed that was not predicted.
func (p Prediction) Agrees() bool {
	return p.Error == "" && slices.Equal(p.observable(), p.Observed)
}

// capiObservable are the preflight IDs a Cluster API roll of the lab shows or rules out.
var capiObservable = []string{"etcd-removed-before-drain", "issuer-placeholder", "lb-check-not-ready-aware", "rollout-planned", "sa-key-change", "sa-secret-missing"}

// observable are the predicted IDs the run can show or rule out, sorted.
func (p Prediction) observable() []string {
	var out []string
	for _, id := range p.Predicted {
		if slices.Contains(p.Observable, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// predict runs preflight's live mode on the workload cluster w1 as the roll is about to start:
// the management cluster's objects and the workload members' served keys, rolled again.
func predict(ctx context.Context, mgmt *rest.Config) Prediction {
	p := Prediction{Observable: capiObservable}
	set, err := live.Read(ctx, live.Config{Mgmt: mgmt, Namespace: "default", Name: "w1"})
	if err != nil {
		p.Error = err.Error()
		return p
	}
	r, err := preflight.Run(preflight.Config{Current: set, Reroll: true})
	if err != nil {
		p.Error = err.Error()
		return p
	}
	p.Predicted = r.IDs()
	return p
}

// observed judges, from what the roll did, which predictable findings it bore out:
//   - rollout-planned: machines were replaced;
//   - etcd-removed-before-drain: the old machine's etcd member was gone by the look (every
//     capilab.PollEvery) that first saw its Machine's deletion timestamp, when the drain starts;
//   - lb-check-not-ready-aware: the old machine stayed in rotation after its etcd removal longer
//     than a readiness-aware check takes to fail it (UnhealthyThreshold+1 intervals);
//   - sa-key-change: the <cluster>-sa key after the roll is not the one before it;
//   - sa-secret-missing: the deleted <cluster>-sa had its effect: a new key (v1.12 and before)
//     or a roll KubeadmControlPlane stopped with CertificatesAvailable False (v1.13 on);
//   - rollout-planned also when the roll was blocked with machines not up to date;
//   - issuer-placeholder: a joined machine's kube-apiserver ran twice (the placeholder, then the
//     rewritten manifest).
func (ce *CAPIEvidence) observed() []string {
	r := ce.Roll
	var out []string
	if len(r.Before) > 0 && len(r.After) == len(r.Before) || r.Blocked != nil && r.Blocked.UpToDate < r.Blocked.Replicas {
		out = append(out, "rollout-planned")
	}
	if r.Blocked != nil && r.Blocked.Condition.Type == "CertificatesAvailable" ||
		ce.SAKeyBefore != "" && ce.SAKeyAfter != "" && ce.SAKeyBefore != ce.SAKeyAfter {
		out = append(out, "sa-secret-missing")
	}
	if len(r.Before) > 0 {
		old := r.Before[0]
		removed, deleting, out2 := r.At(capilab.PhaseMemberRemoved, old), r.At(capilab.PhaseDeleting, old), r.At(capilab.PhaseOutOfRotation, old)
		// One look reads the Machines before the etcd members: a removal seen in the same look
		// as the deletion timestamp is timed after it whichever came first.
		if !removed.IsZero() && !deleting.IsZero() && removed.Before(deleting.Add(capilab.PollEvery)) {
			out = append(out, "etcd-removed-before-drain")
		}
		bound := time.Duration(infra.DefaultIntervalSeconds*(infra.DefaultUnhealthyThreshold+1)) * time.Second
		if !removed.IsZero() && !out2.IsZero() && out2.Sub(removed) > bound {
			out = append(out, "lb-check-not-ready-aware")
		}
	}
	if ce.SAKeyBefore != "" && ce.SAKeyAfter != "" && ce.SAKeyBefore != ce.SAKeyAfter {
		out = append(out, "sa-key-change")
	}
	for _, m := range r.After {
		if ce.Patched != "" && len(ce.APIServerRuns[m]) > 1 {
			out = append(out, "issuer-placeholder")
			break
		}
	}
	slices.Sort(out)
	return out
}

// predictionNote says in one line whether the prediction met the outcome.
func (p Prediction) note() string {
	if p.Error != "" {
		return "preflight could not predict the roll: " + p.Error
	}
	verdict := "agree"
	if !p.Agrees() {
		verdict = "DISAGREE"
	}
	return fmt.Sprintf("preflight predicted [%s]; the lab showed [%s]: they %s.",
		strings.Join(p.observable(), ", "), strings.Join(p.Observed, ", "), verdict)
}
