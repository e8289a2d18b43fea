package logs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// labExpect is the cause each lab scenario must show; "" means no authentication failures.
var labExpect = map[string]string{
	"key-drift":                "signing-key-unknown",
	"issuer-change":            "issuer-not-accepted",
	"audience-change":          "audience-mismatch",
	"bound-object-deleted":     "bound-object-invalidated",
	"serviceaccount-recreated": "serviceaccount-recreated",
	"clock-skew":               "token-not-yet-valid",
	"healthy-roll":             "",
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

// expectedMember names the member a scenario's cause must show on: a member the scenario added
// that saw 401s (the new member), else the member with the most 401s, else any.
func expectedMember(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "evidence.json"))
	if err != nil {
		return ""
	}
	var ev labEvidence
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s/evidence.json: %v", dir, err)
	}
	best, most, added := "", 0, ""
	for _, p := range ev.Phases {
		for _, m := range p.Members {
			if strings.HasPrefix(m.Role, "added") && m.Unauthorized > 0 && added == "" {
				added = m.Name
			}
			if m.Unauthorized > most {
				best, most = m.Name, m.Unauthorized
			}
		}
	}
	if added != "" {
		return added
	}
	return best
}

// TestLabCaptures walks the real kube-apiserver logs captured from every lab scenario on both
// version lines (hack/capture-logs.sh writes testdata/lab/<line>/<scenario>/<member>.log): each
// scenario's logs yield the expected cause on the expected member, and the verdict names it.
func TestLabCaptures(t *testing.T) {
	t.Parallel()
	root := filepath.Join("testdata", "lab")
	lines, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		t.Fatal("no lab captures under testdata/lab: they are committed; hack/capture-logs.sh rewrites them")
	}
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range lines {
		scenarios, err := os.ReadDir(filepath.Join(root, line.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range scenarios {
			want, ok := labExpect[sc.Name()]
			if !ok {
				continue
			}
			dir := filepath.Join(root, line.Name(), sc.Name())
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			if len(logs) == 0 {
				continue
			}
			seen++
			t.Run(line.Name()+"/"+sc.Name(), func(t *testing.T) {
				sort.Strings(logs)
				r := analyzeFiles(t, Config{}, logs...)
				if r.Summary.UnknownLines > 0 {
					t.Errorf("%d authentication lines with no known cause: %+v", r.Summary.UnknownLines, r.Unknown)
				}
				if want == "" {
					if r.Summary.AuthFailures != 0 || len(r.Verdict) != 0 {
						t.Errorf("want no authentication failures, got %d: %+v", r.Summary.AuthFailures, r.Failures)
					}
					return
				}
				member := expectedMember(t, dir)
				found := false
				for _, g := range r.Failures {
					if g.Cause == want && (member == "" || g.Host == member) {
						found = true
					}
				}
				if !found {
					t.Errorf("no %s on member %q; failures: %+v", want, member, r.Failures)
				}
				if len(r.Verdict) == 0 || r.Verdict[0].Cause != want {
					t.Errorf("verdict does not name %s first: %+v", want, r.Verdict)
				} else if member != "" && !strings.Contains(r.Verdict[0].Statement, member) {
					t.Errorf("verdict does not name member %s: %s", member, r.Verdict[0].Statement)
				}
			})
		}
	}
	if seen == 0 {
		t.Fatal("testdata/lab holds no scenario logs: they are committed; hack/capture-logs.sh rewrites them")
	}
}
