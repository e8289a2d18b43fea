// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// Step is one step of the predicted roll and the trust matrix after it.
type Step struct {
	N       int    `json:"n"`
	Action  string `json:"action"` // add, remove, update
	Machine string `json:"machine"`
	Config  string `json:"config"` // current, planned (init or join)
	// Creds of the machine added or updated; empty for remove.
	Creds *Creds `json:"creds,omitempty"`
	// Groups are the members after the step, grouped by the credentials they run, with the
	// groups whose tokens each accepts: the predicted trust matrix. "pre-roll" stands for the
	// tokens pods hold, minted by the current control plane.
	Groups  []Group  `json:"groups"`
	Rejects []string `json:"rejects,omitempty"`
}

// Group is members running the same credentials.
type Group struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
	Accepts []string `json:"accepts"`
	creds   Creds
}

// PreRoll names the tokens minted before the roll in a trust matrix.
const PreRoll = "pre-roll"

// roll is the predicted roll: which machines roll, why, and the steps.
type roll struct {
	Reasons []string
	Rolled  []string
	Steps   []Step
}

// planRoll models the roll machine by machine; all rolls every machine (Config.Reroll).
func planRoll(cur, pl *Plane, all bool) roll {
	var r roll
	var rolled []Member
	if all {
		r.Reasons = []string{Reroll}
	}
	if cur.KCP != nil && pl.KCP != nil {
		r.Reasons = append(r.Reasons, rolloutReasons(cur, pl)...)
		for _, m := range cur.Members {
			if len(r.Reasons) > 0 || m.Version != "" && m.Version != pl.Version || m.Infra != "" && m.Infra != pl.KCP.InfraTemplate {
				rolled = append(rolled, m)
			}
		}
		if len(r.Reasons) == 0 && len(rolled) > 0 {
			r.Reasons = []string{"machines differ from the planned version or template"}
		}
	} else if all || !cur.Creds.equal(pl.Creds) || cur.Version != pl.Version || !reflect.DeepEqual(cur.RawArgs, pl.RawArgs) {
		if !all {
			r.Reasons = []string{"the API server's flags or version differ"}
		}
		rolled = cur.Members
	}
	members := slices.Clone(cur.Members)
	for i := range members {
		members[i].Config = "current"
	}
	pre := cur.Creds
	add := func(m Member, cfg string) {
		members = append(members, m)
		r.Steps = append(r.Steps, step(len(r.Steps)+1, "add", m.Name, cfg, &m.Creds, members, pre))
	}
	remove := func(name string) {
		members = slices.DeleteFunc(members, func(m Member) bool { return m.Name == name })
		r.Steps = append(r.Steps, step(len(r.Steps)+1, "remove", name, "current", nil, members, pre))
	}
	for i, old := range rolled {
		r.Rolled = append(r.Rolled, old.Name)
		switch {
		case cur.KCP != nil:
			nm := Member{Name: pl.KCP.Name + "-new-" + itoa(i+1), Config: "planned", Creds: pl.JoinCreds}
			if pl.KCP.MaxSurge == 0 {
				remove(old.Name)
				add(nm, "planned (join)")
			} else {
				add(nm, "planned (join)")
				remove(old.Name)
			}
		default:
			c := pl.Creds
			for _, m := range pl.Members {
				if m.Name == old.Name {
					c = m.Creds
				}
			}
			j := slices.IndexFunc(members, func(m Member) bool { return m.Name == old.Name })
			members[j].Creds, members[j].Config = c, "planned"
			r.Steps = append(r.Steps, step(len(r.Steps)+1, "update", old.Name, "planned", &c, members, pre))
		}
	}
	return r
}

func step(n int, action, machine, cfg string, c *Creds, members []Member, pre Creds) Step {
	s := Step{N: n, Action: action, Machine: machine, Config: cfg, Creds: c}
	for _, m := range members {
		i := slices.IndexFunc(s.Groups, func(g Group) bool { return g.creds.equal(m.Creds) })
		if i < 0 {
			name := m.Config
			for k := 2; slices.ContainsFunc(s.Groups, func(g Group) bool { return g.Name == name }); k++ {
				name = m.Config + "#" + itoa(k)
			}
			s.Groups = append(s.Groups, Group{Name: name, creds: m.Creds})
			i = len(s.Groups) - 1
		}
		s.Groups[i].Members = append(s.Groups[i].Members, m.Name)
	}
	for i := range s.Groups {
		v := &s.Groups[i]
		v.Accepts = []string{}
		if v.creds.accepts(pre) {
			v.Accepts = append(v.Accepts, PreRoll)
		} else {
			s.Rejects = append(s.Rejects, v.Name+" rejects "+PreRoll)
		}
		for _, m := range s.Groups {
			if v.creds.accepts(m.creds) {
				v.Accepts = append(v.Accepts, m.Name)
			} else {
				s.Rejects = append(s.Rejects, v.Name+" rejects "+m.Name)
			}
		}
	}
	return s
}

// rolloutReasons is MachinesNeedingRollout at the KCP level (filters.go): version, infrastructure
// template, machine template metadata, any KubeadmConfigSpec difference, rolloutAfter.
func rolloutReasons(cur, pl *Plane) []string {
	var out []string
	c, p := cur.KCP, pl.KCP
	if c.Version != p.Version {
		out = append(out, "version "+c.Version+" → "+p.Version)
	}
	if c.InfraTemplate != p.InfraTemplate {
		out = append(out, "infrastructure template "+c.InfraTemplate+" → "+p.InfraTemplate)
	}
	if !jsonEqual(c.TemplateMetadata, p.TemplateMetadata) {
		out = append(out, "machine template metadata")
	}
	if !c.SameSpec(p) {
		out = append(out, "kubeadmConfigSpec")
	}
	if p.RolloutAfter != "" && p.RolloutAfter != c.RolloutAfter {
		out = append(out, "rolloutAfter "+p.RolloutAfter)
	}
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}

// trustCell is a step's trust matrix in one table cell.
func trustCell(s Step) string {
	if len(s.Rejects) == 0 {
		return "all accept all"
	}
	return strings.Join(s.Rejects, "; ")
}

// membersCell counts a step's members by group: "current 2, planned 1".
func membersCell(s Step) string {
	var out []string
	for _, g := range s.Groups {
		out = append(out, g.Name+" "+itoa(len(g.Members)))
	}
	return strings.Join(out, ", ")
}
