package steps

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/credwatch/credwatch/pkg/report"
)

// maxMessagesPerStep bounds the logged lines the table shows for one step (JSON keeps them all).
const maxMessagesPerStep = 3

// lineWidth is the widest line the table writes outside its rows.
const lineWidth = 120

// WriteTable prints the steps for people: one row per step, then what each step's components
// logged most.
func (e *Evidence) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "\nCloud era %s, step by step:\n", e.Era)
	tw := report.NewTabWriter(w)
	report.Row(tw, "STEP", "LOGINS OK/REJECTED", "NODES", "PODS")
	for _, s := range e.Steps {
		report.Row(tw, s.Name, fmt.Sprintf("%d/%d", s.LoginsAccepted, s.LoginsRejected), nodes(s.Nodes), pods(s.Deployments))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range e.Steps {
		fmt.Fprintln(w)
		if err := report.Hang(w, "== "+s.Name+": ", "   ", s.Action); err != nil {
			return err
		}
		for _, r := range restarted(s.Restarted) {
			fmt.Fprintf(w, "  restarted %s\n", cut(r, lineWidth-12))
		}
		for _, c := range topMessages(s.Messages) {
			head := fmt.Sprintf("  %s ×%d: ", c.component, c.Count.Count)
			fmt.Fprintf(w, "%s%s\n", head, cut(c.Message, lineWidth-len([]rune(head))))
		}
	}
	return nil
}

func nodes(ns []NodeState) string {
	var out []string
	for _, n := range ns {
		st := "NotReady"
		if n.Ready {
			st = "Ready"
		}
		if n.Uninitialized {
			st += ",uninitialized"
		}
		out = append(out, n.Name+" "+st)
	}
	return strings.Join(out, "; ")
}

func pods(ws []Workload) string {
	byPhase := map[string]int{}
	for _, w := range ws {
		for phase, n := range w.Pods {
			byPhase[phase] += n
		}
	}
	phases := make([]string, 0, len(byPhase))
	for p := range byPhase {
		phases = append(phases, p)
	}
	sort.Strings(phases)
	var out []string
	for _, p := range phases {
		out = append(out, strconv.Itoa(byPhase[p])+" "+p)
	}
	return strings.Join(out, ", ")
}

func restarted(r map[string]string) []string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, k+": "+r[k])
	}
	return out
}

type componentCount struct {
	component string
	Count
}

// topMessages are a step's most frequent logged lines across components, at most
// maxMessagesPerStep.
func topMessages(m map[string][]Count) []componentCount {
	var all []componentCount
	for comp, cs := range m {
		for _, c := range cs {
			all = append(all, componentCount{comp, c})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Count.Count != all[j].Count.Count {
			return all[i].Count.Count > all[j].Count.Count
		}
		if all[i].component != all[j].component {
			return all[i].component < all[j].component
		}
		return all[i].Message < all[j].Message
	})
	return all[:min(len(all), maxMessagesPerStep)]
}

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
