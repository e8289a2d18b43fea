// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package fleet_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/fleet"

	"github.com/credwatch/credwatch/pkg/report"
)

func healthy() *check.Report {
	return &check.Report{Members: []check.Member{{Endpoint: check.Endpoint{Name: "a"}, Reachable: true}, {Endpoint: check.Endpoint{Name: "b"}, Reachable: true}},
		Matrix: &check.Matrix{Rows: []check.Row{
			{Via: "a", Cells: []check.Cell{{Member: "a", Accepted: true}, {Member: "b", Accepted: true}}},
			{Via: "b", Cells: []check.Cell{{Member: "a", Accepted: true}, {Member: "b", Accepted: true}}}}}}
}

func drifted() *check.Report {
	r := healthy()
	r.Matrix.Rows[1].Cells[0] = check.Cell{Member: "a", Cause: "member-key-drift"}
	r.Matrix.Rows[0].Cells[1] = check.Cell{Member: "b", Cause: "unreachable"} // not an answer: not counted
	r.Findings = []finding.Finding{{ID: "member-key-drift", Severity: catalogue.Error}, {ID: "x", Severity: catalogue.Warning}}
	return r
}

func TestCheck(t *testing.T) {
	reports := map[string]func() (*check.Report, error){
		"healthy": func() (*check.Report, error) { return healthy(), nil },
		"drifted": func() (*check.Report, error) { return drifted(), nil },
		"partial": func() (*check.Report, error) { r := healthy(); r.Partial = true; return r, nil },
		"down":    func() (*check.Report, error) { return nil, errors.New("dial tcp: connection refused") },
	}
	tests := []struct {
		name     string
		clusters []string
		want     fleet.Outcome
		rows     []string
	}{
		{"all healthy", []string{"healthy", "healthy"}, fleet.OK, []string{"healthy  https://healthy  none  2/2 up  0  no  -"}},
		{"one drifted", []string{"healthy", "drifted"}, fleet.Findings, []string{"drifted  https://drifted  error (member-key-drift)  2/2 up  1  no  -"}},
		{"findings beat partial", []string{"partial", "drifted"}, fleet.Findings, []string{"partial  https://partial  none  2/2 up  0  yes  -"}},
		{"unreachable beats findings", []string{"drifted", "down"}, fleet.Unreachable, []string{"down  https://down  -  -  -  -  dial tcp: connection refused"}},
		{"partial alone", []string{"partial"}, fleet.Partial, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var clusters []fleet.Cluster
			for _, c := range tt.clusters {
				clusters = append(clusters, fleet.Cluster{Context: c, Config: check.Config{REST: &rest.Config{Host: "https://" + c}}})
			}
			r := fleet.Check(context.Background(), clusters, fleet.Options{FailOn: catalogue.Error,
				Check: func(_ context.Context, c check.Config) (*check.Report, error) {
					return reports[strings.TrimPrefix(c.REST.Host, "https://")]()
				}})
			if got := r.Outcome(catalogue.Error); got != tt.want {
				t.Errorf("outcome %d, want %d", got, tt.want)
			}
			for i, c := range r.Clusters {
				if c.Context != tt.clusters[i] {
					t.Errorf("cluster %d is %s, want %s (order kept)", i, c.Context, tt.clusters[i])
				}
			}
			var b bytes.Buffer
			if err := r.WriteTable(&b, report.TableOptions{}); err != nil {
				t.Fatal(err)
			}
			table := squeeze(b.String())
			for _, row := range tt.rows {
				if !strings.Contains(table, row) {
					t.Errorf("table lacks %q:\n%s", row, table)
				}
			}
		})
	}
}

// TestCheckBounded: no more than Parallel clusters are checked at once, and all are checked.
func TestCheckBounded(t *testing.T) {
	var now, peak, calls atomic.Int32
	clusters := make([]fleet.Cluster, 9)
	r := fleet.Check(context.Background(), clusters, fleet.Options{Parallel: 3,
		Check: func(context.Context, check.Config) (*check.Report, error) {
			calls.Add(1)
			n := now.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond)
			now.Add(-1)
			return healthy(), nil
		}})
	if calls.Load() != 9 || len(r.Clusters) != 9 {
		t.Errorf("checked %d clusters, reported %d; want 9", calls.Load(), len(r.Clusters))
	}
	if p := peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrency %d, want 2..3", p)
	}
}

// squeeze makes every run of two or more spaces (a column gap) exactly two.
func squeeze(s string) string { return gaps.ReplaceAllString(s, "  ") }

var gaps = regexp.MustCompile(` {2,}`)
