// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// labCase is what one lab scenario's captured logs must show.
type labCase struct {
	cause string // the cause the logs must show; "" means no authentication failures at all
	// role is the role prefix (evidence.json) of the member that must show the cause; "*" means
	// every member; "" picks it by the tenants' 401s.
	role string
}

// labExpect holds every scenario hack/capture-logs.sh captures: a capture directory missing from
// it fails the test, as does an entry no capture exercises.
var labExpect = map[string]labCase{
	"key-drift":                {cause: "signing-key-unknown"},
	"issuer-change":            {cause: "issuer-not-accepted"},
	"audience-change":          {cause: "audience-mismatch"},
	"bound-object-deleted":     {cause: "bound-object-invalidated"},
	"serviceaccount-recreated": {cause: "serviceaccount-recreated"},
	"clock-skew":               {cause: "token-not-yet-valid", role: "*"}, // probes every member
	"etcd-member-removed":      {cause: "serviceaccount-lookup-failed", role: "etcd member removed"},
	"healthy-roll":             {},
	"mixed-version-roll":       {},
}

// labEvidence is the part of the lab's evidence.json this test reads.
type labEvidence struct {
	Phases []struct {
		Members []struct {
			Name         string `json:"name"`
			Role         string `json:"role"`
			Unauthorized int    `json:"unauthorized"`
		} `json:"members"`
	} `json:"phases"`
}

// expectedMembers names the members a scenario's cause must show on, from the scenario's
// evidence.json (which must exist): every member for role "*", the member whose role starts with
// role when role is set, else a member the scenario added that saw 401s (the new member), else
// the member with the most 401s. It fails the test when no member qualifies.
func expectedMembers(t *testing.T, dir, role string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "evidence.json"))
	if err != nil {
		t.Fatalf("the evidence names the member to expect: %v (hack/capture-logs.sh writes it)", err)
	}
	var ev labEvidence
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s/evidence.json: %v", dir, err)
	}
	best, most, added, withRole := "", 0, "", ""
	var all []string
	for _, p := range ev.Phases {
		for _, m := range p.Members {
			if !slices.Contains(all, m.Name) {
				all = append(all, m.Name)
			}
			if role != "" && strings.HasPrefix(m.Role, role) && withRole == "" {
				withRole = m.Name
			}
			if strings.HasPrefix(m.Role, "added") && m.Unauthorized > 0 && added == "" {
				added = m.Name
			}
			if m.Unauthorized > most {
				best, most = m.Name, m.Unauthorized
			}
		}
	}
	switch {
	case role == "*" && len(all) > 0:
		return all
	case role != "":
		best = withRole
	case added != "":
		best = added
	}
	if best == "" {
		t.Fatalf("%s/evidence.json names no member to expect (role %q, or one with 401s)", dir, role)
	}
	return []string{best}
}

// TestLabCaptures walks the real kube-apiserver logs captured from every lab scenario on both
// version lines (hack/capture-logs.sh writes testdata/lab/<line>/<scenario>/<member>.log and
// evidence.json): each scenario's logs yield the expected cause on the expected member, and the
// verdict names it. The captures are committed: a missing or empty one, or one labExpect does not
// know, fails the test.
func TestLabCaptures(t *testing.T) {
	t.Parallel()
	root := filepath.Join("testdata", "lab")
	lines, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("lab captures: %v (they are committed; hack/capture-logs.sh rewrites them)", err)
	}
	captured := map[string]bool{}
	for _, line := range lines {
		scenarios, err := os.ReadDir(filepath.Join(root, line.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range scenarios {
			dir := filepath.Join(root, line.Name(), sc.Name())
			tc, ok := labExpect[sc.Name()]
			if !ok {
				t.Errorf("%s: a capture of a scenario labExpect does not know: add what its logs must show", dir)
				continue
			}
			captured[sc.Name()] = true
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			if len(logs) == 0 {
				t.Errorf("%s: no member logs (hack/capture-logs.sh rewrites them)", dir)
				continue
			}
			t.Run(line.Name()+"/"+sc.Name(), func(t *testing.T) {
				sort.Strings(logs)
				checkCapture(t, dir, tc, analyzeFiles(t, Config{}, logs...))
			})
		}
	}
	for name := range labExpect {
		if !captured[name] {
			t.Errorf("no capture of scenario %s under %s (hack/capture-logs.sh writes them)", name, root)
		}
	}
}

// checkCapture asserts what one scenario's captured logs must show.
func checkCapture(t *testing.T, dir string, tc labCase, r *Report) {
	t.Helper()
	if r.Summary.UnknownLines > 0 {
		t.Errorf("%d authentication lines with no known cause: %+v", r.Summary.UnknownLines, r.Unknown)
	}
	if tc.cause == "" {
		if r.Summary.AuthFailures != 0 || len(r.Verdict) != 0 {
			t.Errorf("want no authentication failures, got %d: %+v", r.Summary.AuthFailures, r.Failures)
		}
		return
	}
	members := expectedMembers(t, dir, tc.role)
	for _, member := range members {
		found := false
		for _, g := range r.Failures {
			found = found || (g.Cause == tc.cause && g.Host == member)
		}
		if !found {
			t.Errorf("no %s on member %q; failures: %+v", tc.cause, member, r.Failures)
		}
	}
	if len(r.Verdict) == 0 || r.Verdict[0].Cause != tc.cause {
		t.Errorf("verdict does not name %s first: %+v", tc.cause, r.Verdict)
	} else if len(members) == 1 && !strings.Contains(r.Verdict[0].Statement, members[0]) {
		t.Errorf("verdict does not name member %s: %s", members[0], r.Verdict[0].Statement)
	}
}
