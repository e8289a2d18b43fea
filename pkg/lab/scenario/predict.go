// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package scenario

import (
	"slices"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/tally"
	"github.com/credwatch/credwatch/pkg/logs/cause"
	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
	"sigs.k8s.io/yaml"
)

// The lab's own scenarios that change the control plane (a new member with other credentials, a
// roll) are predicted offline, the way an operator of static-pod control planes would run
// preflight: every member's kube-apiserver flags as a static-pod manifest, current beside planned.

// staticObservable are the preflight IDs a member added to the lab shows or rules out.
var staticObservable = []string{"audience-change-drops-old", "issuer-change-drops-old", "issuer-switch-before-all-accept", "no-change", "sa-key-change"}

// predictStatic runs preflight offline with the current members' flags as the current side and
// the added member's flags as the plan for every member.
func predictStatic(current []lab.Member, planned lab.Member) Prediction {
	p := Prediction{Observable: staticObservable}
	cur, pl := &input.Set{}, &input.Set{}
	for _, m := range current {
		if err := cur.Add("current/"+m.Name+".yaml", staticPodManifest(m)); err != nil {
			p.Error = err.Error()
			return p
		}
	}
	if err := pl.Add("planned/"+planned.Name+".yaml", staticPodManifest(planned)); err != nil {
		p.Error = err.Error()
		return p
	}
	r, err := preflight.Run(preflight.Config{Current: cur, Planned: pl})
	if err != nil {
		p.Error = err.Error()
		return p
	}
	p.Predicted = r.IDs()
	return p
}

// staticPodManifest is m's kube-apiserver as kubeadm would write it: its command line as the
// container's command and its address as the advertise-address annotation preflight names
// members by.
func staticPodManifest(m lab.Member) []byte {
	cmd := []string{"kube-apiserver"}
	if len(m.Args) > 1 {
		cmd = append(cmd, m.Args[1:]...)
	}
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"name": "kube-apiserver", "namespace": "kube-system",
			"annotations": map[string]string{"kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint": m.Address},
		},
		"spec": map[string]any{"containers": []map[string]any{{"name": "kube-apiserver", "command": cmd}}},
	}
	b, _ := yaml.Marshal(pod) // a map of strings always marshals
	return b
}

// staticObserved judges, from what the tenants' pods and the probes got in phase ph and what the
// members logged, which predictable findings the change bore out. added are the members the
// phase added; every other member is an original one.
//   - sa-key-change: a token was rejected for its signature (signing-key-unknown);
//   - issuer-change-drops-old: a token an original member minted was rejected by an added member
//     for its issuer (issuer-not-accepted);
//   - issuer-switch-before-all-accept: a token an added member minted was rejected by an original
//     member for its issuer;
//   - audience-change-drops-old: a token was rejected for its audience (audience-mismatch);
//   - no-change: nothing was rejected at all.
func staticObserved(ph Phase, added []string) []string {
	cl := cause.NewClassifier(catalogue.Default())
	causes := map[string][]string{} // member -> the causes of what it logged
	for _, m := range ph.Members {
		for _, mc := range m.AuthMessages {
			if c, ok := cl.Classify(cause.Line{Msg: "Unable to authenticate the request", Err: mc.Message}); ok {
				causes[m.Name] = append(causes[m.Name], c.Cause)
			}
		}
	}
	type rejection struct{ mintedBy, servedBy string }
	var rejected []rejection
	for _, pr := range ph.Tenants.Pairs {
		if pr.Unauthorized > 0 && pr.ServedBy != tally.NoResponse {
			rejected = append(rejected, rejection{pr.MintedBy, pr.ServedBy})
		}
	}
	for _, pr := range ph.Probes {
		if pr.Status == 401 {
			rejected = append(rejected, rejection{pr.MintedBy, pr.PresentedTo})
		}
	}
	var out []string
	add := func(id string) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, r := range rejected {
		fromAdded, toAdded := slices.Contains(added, r.mintedBy), slices.Contains(added, r.servedBy)
		for _, c := range causes[r.servedBy] {
			switch {
			case c == "signing-key-unknown":
				add("sa-key-change")
			case c == "audience-mismatch":
				add("audience-change-drops-old")
			case c == "issuer-not-accepted" && !fromAdded && toAdded:
				add("issuer-change-drops-old")
			case c == "issuer-not-accepted" && fromAdded && !toAdded:
				add("issuer-switch-before-all-accept")
			}
		}
	}
	if len(rejected) == 0 && len(ph.Messages()) == 0 {
		add("no-change")
	}
	slices.Sort(out)
	return out
}

// predicted attaches pred to ph, judged against what ph showed; added are the members the phase
// added.
func predicted(ph Phase, pred Prediction, added []string) Phase {
	pred.Observed = staticObserved(ph, added)
	ph.Prediction = &pred
	return ph
}
