// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch_test

// Helpers of the lab tests (watch_integration_test.go).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/internal/cli"
	cmdwatch "github.com/credwatch/credwatch/internal/cmd/watch"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/watch"
)

// interval and timeout of the watches on the lab.
const (
	interval = 2 * time.Second
	timeout  = 2 * time.Second
)

// log keeps every state and event of a running watch, for the test goroutine.
type log struct {
	mu     sync.Mutex
	states []*watch.State
	events []watch.Event
	ends   []time.Time // ends[i]: when the interval of events[i] finished
}

func (l *log) Observe(s *watch.State, ev []watch.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.states = append(l.states, s)
	l.events = append(l.events, ev...)
	for range ev {
		l.ends = append(l.ends, s.Time.Add(s.Took))
	}
}

// since returns the events of the intervals that finished at or after t. An event's Time is
// when its interval started: an interval that started before a change may still see it (a
// member resumed while its /version was pending, a log line written before the poll).
func (l *log) since(t time.Time) []watch.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []watch.Event
	for i, e := range l.events {
		if !l.ends[i].Before(t) {
			out = append(out, e)
		}
	}
	return out
}

// await waits for an event matching after since and fails unless it came within n intervals
// of since (plus one timeout: the interval running at since may have started before the change).
func (l *log) await(t *testing.T, since time.Time, n int, what string, match func(watch.Event) bool) watch.Event {
	t.Helper()
	return l.awaitFrom(t, since, since, n, what, match)
}

// awaitFrom is await for a change that took from `from` to `since` to happen (a member being
// added is listed while it starts): events from `from` count, the limit runs from since.
func (l *log) awaitFrom(t *testing.T, from, since time.Time, n int, what string, match func(watch.Event) bool) watch.Event {
	t.Helper()
	limit := since.Add(time.Duration(n)*interval + timeout)
	for {
		for _, e := range l.since(from) {
			if match(e) {
				t.Logf("%s after %s: %s", what, e.Time.Sub(since).Round(time.Millisecond), watch.FormatEvent(e))
				if e.Time.After(limit) {
					t.Errorf("%s came %s after the change, want within %d intervals", what, e.Time.Sub(since).Round(time.Millisecond), n)
				}
				return e
			}
		}
		if time.Now().After(limit.Add(2 * interval)) {
			t.Fatalf("no %s within %d intervals; events since: %s\nlast state: %s", what, n, formatAll(l.since(since)), describeLast(l))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// awaitFinding waits for an interval that finished after since whose state has (want) or lacks
// (!want) finding id on member, fails unless one came within n intervals, and returns the
// finding (zero when !want).
func (l *log) awaitFinding(t *testing.T, since time.Time, n int, id, member string, want bool) finding.Finding {
	t.Helper()
	return l.awaitFindingWhere(t, since, n, id, member, want, nil)
}

// awaitFindingWhere is awaitFinding for a finding that also satisfies match (nil: any).
func (l *log) awaitFindingWhere(t *testing.T, since time.Time, n int, id, member string, want bool, match func(finding.Finding) bool) finding.Finding {
	t.Helper()
	limit := since.Add(time.Duration(n)*interval + timeout)
	for {
		l.mu.Lock()
		var hit *watch.State
		var got finding.Finding
		for _, s := range l.states {
			if s.Time.Add(s.Took).Before(since) {
				continue
			}
			i := slices.IndexFunc(s.Findings, func(f finding.Finding) bool {
				return f.ID == id && f.Member == member && (match == nil || match(f))
			})
			if (i >= 0) == want {
				hit = s
				if i >= 0 {
					got = s.Findings[i]
				}
				break
			}
		}
		l.mu.Unlock()
		if hit != nil {
			t.Logf("%s on %s %s after %s (interval %d): %s", id, member, map[bool]string{true: "present", false: "gone"}[want], hit.Time.Add(hit.Took).Sub(since).Round(time.Millisecond), hit.Interval, got.Message)
			if hit.Time.After(limit) {
				t.Errorf("%s on %s: want present=%v within %d intervals", id, member, want, n)
			}
			return got
		}
		if time.Now().After(limit.Add(2 * interval)) {
			t.Fatalf("%s on %s: not present=%v within %d intervals; events since: %s\nlast state: %s", id, member, want, n, formatAll(l.since(since)), describeLast(l))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func formatAll(evs []watch.Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString("\n  " + watch.FormatEvent(e))
	}
	return b.String()
}

func is(kind watch.Kind, id, member string) func(watch.Event) bool {
	return func(e watch.Event) bool {
		return e.Kind == kind && (id == "" || e.ID == id) && (member == "" || e.Member == member)
	}
}

// scrape returns the /metrics text.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// runCommand runs `credwatch watch --duration ... -o json --report` during the key drift: exit 1,
// JSON lines naming the drift, a timeline page with the drifted member's lane, no token.
func runCommand(t *testing.T, l *lab.Lab, drifted string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := cmdwatch.NewCommand(cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	page := filepath.Join(t.TempDir(), "watch.html")
	args := []string{"--kubeconfig", l.AdminKubeconfig(), "--interval", interval.String(), "--duration", (3 * interval).String(),
		"-o", "json", "--report", page}
	for _, m := range l.Members() {
		args = append(args, "--endpoint", m.URL)
	}
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	t.Logf("credwatch watch -> exit %d; stderr: %s", cli.Code(err), errOut.String())
	if cli.Code(err) != cli.ExitFindings {
		t.Errorf("exit %d, want 1 (%v)", cli.Code(err), err)
	}
	if !strings.Contains(out.String(), `"id":"member-key-drift"`) || strings.Contains(out.String(), "eyJ") {
		t.Errorf("JSON lines:\n%s", out.String())
	}
	b, err := os.ReadFile(page)
	if err != nil || !bytes.Contains(b, []byte(">"+drifted+"<")) || bytes.Contains(b, []byte("eyJ")) {
		t.Errorf("report %s: %v\n%.3000s", page, err, b)
	}
}

func member(t *testing.T, l *lab.Lab, prefer string) (string, int) {
	t.Helper()
	st := l.Status(context.Background(), false)
	for _, m := range st.Members {
		if m.Name == prefer {
			return m.Name, m.PID
		}
	}
	if len(st.Members) == 0 {
		t.Fatal("no lab members")
	}
	m := st.Members[len(st.Members)-1]
	return m.Name, m.PID
}

// checkPace fails when two consecutive intervals since t started more than one interval plus
// one timeout apart.
func checkPace(t *testing.T, rec *log, since time.Time) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var prev time.Time
	for _, s := range rec.states {
		if s.Time.Before(since) {
			continue
		}
		if !prev.IsZero() && s.Time.Sub(prev) > interval+timeout+interval/4 {
			t.Errorf("interval %d started %s after the previous one", s.Interval, s.Time.Sub(prev).Round(time.Millisecond))
		}
		prev = s.Time
	}
}

func lastState(rec *log) *watch.State {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.states[len(rec.states)-1]
}

func waitKubeEvent(t *testing.T, cs kubernetes.Interface, reason string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		list, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=kubernetes,reason=" + reason})
		if err == nil && len(list.Items) > 0 {
			t.Logf("Event %s on %s/%s: %s", reason, list.Items[0].InvolvedObject.Kind, list.Items[0].InvolvedObject.Name, list.Items[0].Message)
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("no Event with reason %s on default/kubernetes (err %v)", reason, err)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func grep(text, prefix string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// describeLast says which interval the watch saw last, when, and each member's state.
func describeLast(l *log) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.states) == 0 {
		return "none"
	}
	s := l.states[len(l.states)-1]
	out := fmt.Sprintf("interval %d at %s (took %s)", s.Interval, s.Time.Format("15:04:05.000"), s.Took)
	for _, m := range s.Members {
		out += fmt.Sprintf("\n  %s %s up=%v ready=%v %s", m.Name, m.URL, m.Up, m.Ready, m.Error)
	}
	return out
}

// labLogFiles are the log files of the lab's members apiserver-1 … apiserver-n, whether they
// exist yet or not.
func labLogFiles(l *lab.Lab, n int) []watch.LogFile {
	out := make([]watch.LogFile, 0, n)
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("apiserver-%d", i)
		out = append(out, watch.LogFile{Host: name, Path: filepath.Join(l.Dir(), "logs", name+".log")})
	}
	return out
}

// presentHeldToken sends a token minted through signer to verifier as a bearer token, as a pod
// holding it would: a verifier that does not trust it logs why.
func presentHeldToken(t *testing.T, l *lab.Lab, signer, verifier string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := kubernetes.NewForConfig(l.MemberRESTConfig(signer))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(check.DefaultProbeNamespace).CreateToken(ctx, check.DefaultProbeName,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("mint a token through %s: %v", signer, err)
	}
	rc := l.MemberRESTConfig(verifier)
	rc.CertData, rc.KeyData, rc.BearerToken = nil, nil, tr.Status.Token
	vc, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := vc.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
			t.Fatalf("%s accepts the token minted through %s", verifier, signer)
		}
	}
}
