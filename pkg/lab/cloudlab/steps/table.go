// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package steps

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/credwatch/credwatch/pkg/report"
)

// maxMessagesPerStep bounds the logged lines the table shows for one step (JSON keeps them all).
const maxMessagesPerStep = 3

// lineWidth is the widest line the table writes outside its rows; cutNote is room for what
// report.Cut appends to a cut line ("… (NNNN more bytes in -o json)").
const (
	lineWidth = 120
	cutNote   = 30
)

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
		if err := (report.TableOptions{}).Hang(w, "== "+s.Name+": ", "   ", s.Action); err != nil {
			return err
		}
		for _, r := range restarted(s.Restarted) {
			fmt.Fprintf(w, "  restarted %s\n", fit(r, lineWidth-12))
		}
		for _, k := range slices.Sorted(maps.Keys(s.Restarts)) {
			fmt.Fprintf(w, "  %s started again ×%d by its service\n", k, s.Restarts[k])
		}
		for _, f := range s.Findings {
			fmt.Fprintf(w, "  credwatch check: %s\n", fit(f, lineWidth-18))
		}
		for _, f := range s.Cloud {
			fmt.Fprintf(w, "  credwatch cloud: %s\n", fit(f, lineWidth-18))
		}
		for _, c := range topMessages(s.Messages) {
			head := fmt.Sprintf("  %s ×%d: ", c.component, c.Count.Count)
			fmt.Fprintf(w, "%s%s\n", head, fit(c.Message, lineWidth-utf8.RuneCountInString(head)))
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
	var out []string
	for _, p := range slices.Sorted(maps.Keys(byPhase)) {
		out = append(out, strconv.Itoa(byPhase[p])+" "+p)
	}
	return strings.Join(out, ", ")
}

func restarted(r map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(r)) {
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

// fit keeps s when it fits n columns, else cuts it with report.Cut, leaving room for its note.
func fit(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return report.Cut(s, n-cutNote)
}
