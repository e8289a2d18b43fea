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
	// Members after the step, and which minters each accepts tokens from. "pre-roll" stands for
	// the tokens pods hold, minted by the current control plane.
	Members []string            `json:"members"`
	Accepts map[string][]string `json:"accepts"`
	Rejects []string            `json:"rejects,omitempty"`
	Note    string              `json:"note,omitempty"`
}

// PreRoll names the tokens minted before the roll in a trust matrix.
const PreRoll = "pre-roll"

// roll is the predicted roll: which machines roll, why, and the steps.
type roll struct {
	Reasons []string
	Rolled  []string
	Steps   []Step
}

// planRoll models the roll machine by machine.
func planRoll(cur, pl *Plane) roll {
	var r roll
	var rolled []Member
	if cur.KCP != nil && pl.KCP != nil {
		r.Reasons = rolloutReasons(cur, pl)
		for _, m := range cur.Members {
			if len(r.Reasons) > 0 || m.Version != "" && m.Version != pl.Version || m.Infra != "" && m.Infra != pl.KCP.InfraTemplate {
				rolled = append(rolled, m)
			}
		}
		if len(r.Reasons) == 0 && len(rolled) > 0 {
			r.Reasons = []string{"machines differ from the planned version or template"}
		}
	} else if !cur.Creds.equal(pl.Creds) || cur.Version != pl.Version || !reflect.DeepEqual(cur.RawArgs, pl.RawArgs) {
		r.Reasons = []string{"the API server's flags or version differ"}
		rolled = cur.Members
	}
	members := slices.Clone(cur.Members)
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
			nm := Member{Name: pl.KCP.Name + "-new-" + itoa(i+1), Creds: pl.JoinCreds}
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
			members[j].Creds = c
			r.Steps = append(r.Steps, step(len(r.Steps)+1, "update", old.Name, "planned", &c, members, pre))
		}
	}
	return r
}

func step(n int, action, machine, cfg string, c *Creds, members []Member, pre Creds) Step {
	s := Step{N: n, Action: action, Machine: machine, Config: cfg, Creds: c, Accepts: map[string][]string{}}
	for _, v := range members {
		s.Members = append(s.Members, v.Name)
		acc := []string{}
		if v.Creds.accepts(pre) {
			acc = append(acc, PreRoll)
		} else {
			s.Rejects = append(s.Rejects, v.Name+" rejects "+PreRoll)
		}
		for _, m := range members {
			if v.Creds.accepts(m.Creds) {
				acc = append(acc, m.Name)
			} else {
				s.Rejects = append(s.Rejects, v.Name+" rejects "+m.Name)
			}
		}
		s.Accepts[v.Name] = acc
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
	if !jsonEqual(c.SpecJSON, p.SpecJSON) {
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
