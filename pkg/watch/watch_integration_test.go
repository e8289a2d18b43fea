package watch_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/internal/cli"
	cmdwatch "github.com/credwatch/credwatch/internal/cmd/watch"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
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
}

func (l *log) Observe(s *watch.State, ev []watch.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.states = append(l.states, s)
	l.events = append(l.events, ev...)
}

func (l *log) since(t time.Time) []watch.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []watch.Event
	for _, e := range l.events {
		if !e.Time.Before(t) {
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
			t.Fatalf("no %s within %d intervals; events since: %s", what, n, formatAll(l.since(since)))
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

func TestIntegrationWatch(t *testing.T) {
	for _, v := range []string{lab.DefaultVersion, lab.OldVersion} {
		t.Run(v, func(t *testing.T) { testWatch(t, v) })
	}
}

func testWatch(t *testing.T, version string) {
	l := labtest.Start(t, lab.Options{Members: 3, Version: version})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &log{}
	metrics := watch.NewMetrics()
	srv := httptest.NewServer(metrics.Handler())
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(l.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	kev := watch.NewKubeEventsFor(cs)
	w, err := watch.New(watch.Config{
		Check:    check.Config{REST: l.RESTConfig(), CreateProbeSA: true, Timeout: timeout},
		Interval: interval,
		Endpoints: func() []string { // the lab's members are not in the EndpointSlice yet
			var out []string
			for _, m := range l.Members() {
				out = append(out, m.URL)
			}
			return out
		},
		Observers: []watch.Observer{rec, metrics, kev},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan watch.Summary, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		sum := <-done
		kev.Stop()
		t.Logf("watched %d intervals, %d started late (max %s)", sum.Intervals, sum.Slipped, sum.MaxSlip)
		if sum.MaxSlip > timeout+interval/2 {
			t.Errorf("an interval started %s late, want at most one timeout (%s)", sum.MaxSlip, timeout)
		}
	}()
	start := time.Now()
	rec.await(t, start.Add(-time.Second), 2, "apiserver-1 joined", is(watch.MemberJoined, "", "apiserver-1"))
	time.Sleep(interval)
	for _, e := range rec.since(start) {
		if e.Severity.AtLeast("warning") {
			t.Errorf("healthy lab: %s", watch.FormatEvent(e))
		}
	}

	var drifted string // its held tokens stay held (and rejected) until 80 % of their lifetime
	t.Run("key-drift", func(t *testing.T) {
		adding := time.Now()
		m, err := l.AddMember(ctx, lab.MemberOptions{SAKey: lab.SAKeyNew})
		if err != nil {
			t.Fatalf("add member: %v", err)
		}
		joined := time.Now()
		drifted = m.Name
		rec.awaitFrom(t, adding, joined, 2, "member-key-drift naming "+m.Name, is(watch.FindingRaised, "member-key-drift", m.Name))
		e := rec.awaitFrom(t, adding, joined, 2, "held token of apiserver-1 broken on "+m.Name, func(e watch.Event) bool {
			return e.Kind == watch.HeldBroken && e.Signer == "apiserver-1" && e.Verifier == m.Name
		})
		if e.ID != "signing-key-unknown" {
			t.Errorf("held token broken with %q, want signing-key-unknown", e.ID)
		}
		if text := scrape(t, srv.URL); !strings.Contains(text, `credwatch_trust{signer="apiserver-1",verifier="`+m.Name+`"} 0`) ||
			!strings.Contains(text, `credwatch_trust{signer="apiserver-1",verifier="apiserver-2"} 1`) {
			t.Errorf("metrics do not show the broken cell:\n%s", grep(text, "credwatch_trust"))
		}
		waitKubeEvent(t, cs, "MemberKeyDrift")
		runCommand(t, l, m.Name)
		removing := time.Now()
		if err := l.RemoveMember(ctx, m.Name, lab.RemoveOptions{}); err != nil {
			t.Fatalf("remove %s: %v", m.Name, err)
		}
		rec.awaitFrom(t, removing, time.Now(), 2, "member-key-drift cleared", is(watch.FindingCleared, "member-key-drift", m.Name))
		time.Sleep(interval)
		if text := scrape(t, srv.URL); strings.Contains(text, `verifier="`+m.Name+`"`) || strings.Contains(text, `credwatch_trust{signer="apiserver-1",verifier="apiserver-2"} 0`) {
			t.Errorf("metrics after removal:\n%s", grep(text, "credwatch_trust"))
		}
		waitKubeEvent(t, cs, "MemberKeyDriftCleared")
	})

	for _, tc := range []struct {
		name, id string
		opts     lab.MemberOptions
	}{
		{"issuer-change", "member-issuer-drift", lab.MemberOptions{Issuers: []string{"https://issuer.example.test"}}},
		{"audience-change", "member-audience-drift", lab.MemberOptions{APIAudiences: []string{"https://audience.example.test"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adding := time.Now()
			m, err := l.AddMember(ctx, tc.opts)
			if err != nil {
				t.Fatalf("add member: %v", err)
			}
			rec.awaitFrom(t, adding, time.Now(), 2, tc.id+" naming "+m.Name, is(watch.FindingRaised, tc.id, m.Name))
			removing := time.Now()
			if err := l.RemoveMember(ctx, m.Name, lab.RemoveOptions{}); err != nil {
				t.Fatalf("remove %s: %v", m.Name, err)
			}
			rec.awaitFrom(t, removing, time.Now(), 2, tc.id+" cleared", is(watch.FindingCleared, tc.id, m.Name))
		})
	}

	t.Run("etcd-member-removed", func(t *testing.T) {
		adding := time.Now()
		m, err := l.AddMember(ctx, lab.MemberOptions{})
		if err != nil {
			t.Fatalf("add member: %v", err)
		}
		rec.awaitFrom(t, adding, time.Now(), 2, m.Name+" joined", is(watch.MemberJoined, "", m.Name))
		removed := time.Now()
		if err := l.RemoveMember(ctx, m.Name, lab.RemoveOptions{EtcdFirst: true, KeepAPIServer: true}); err != nil {
			t.Fatalf("remove the etcd member of %s: %v", m.Name, err)
		}
		e := rec.await(t, removed, 2, m.Name+" unready or down", func(e watch.Event) bool {
			return e.Member == m.Name && (e.Kind == watch.MemberUnready || e.Kind == watch.MemberDown)
		})
		if e.Kind == watch.MemberUnready && !strings.Contains(e.Message, "etcd") {
			t.Errorf("unready without the failing etcd check named: %s", e.Message)
		}
		if err := l.RemoveMember(ctx, m.Name, lab.RemoveOptions{}); err != nil {
			t.Fatalf("remove %s: %v", m.Name, err)
		}
	})

	t.Run("kill-9", func(t *testing.T) {
		name, pid := member(t, l, "apiserver-3")
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		rec.await(t, killed, 2, name+" down", is(watch.MemberDown, "member-unreachable", name))
		if err := l.RemoveMember(ctx, name, lab.RemoveOptions{}); err != nil {
			t.Fatalf("remove %s: %v", name, err)
		}
		removed := time.Now()
		rec.await(t, removed, 2, "member-unreachable cleared", is(watch.FindingCleared, "member-unreachable", name))
		m, err := l.AddMember(ctx, lab.MemberOptions{})
		if err != nil {
			t.Fatalf("add member: %v", err)
		}
		rec.awaitFrom(t, removed, time.Now(), 2, m.Name+" joined", is(watch.MemberJoined, "", m.Name))
	})

	t.Run("sigstop", func(t *testing.T) {
		name, pid := member(t, l, "apiserver-2")
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stopped := time.Now()
		defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
		rec.await(t, stopped, 2, name+" down (hung)", is(watch.MemberDown, "member-unreachable", name))
		time.Sleep(2 * interval) // the loop keeps its pace while the member hangs
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		resumed := time.Now()
		rec.await(t, resumed, 2, name+" up again", is(watch.MemberUp, "", name))
		checkPace(t, rec, stopped)
	})

	t.Run("healthy-roll", func(t *testing.T) {
		began := time.Now()
		if err := l.Roll(ctx, lab.MemberOptions{}, nil); err != nil {
			t.Fatalf("roll: %v", err)
		}
		time.Sleep(2*interval + timeout)
		transient := map[string]time.Time{}
		for _, e := range rec.since(began) {
			switch {
			case e.Kind == watch.HeldBroken && e.Signer == drifted:
				// Pods holding a token minted through the drifted member fail on the new ones too.
			case e.Kind == watch.TrustBroken || e.Kind == watch.HeldBroken:
				t.Errorf("healthy roll: %s", watch.FormatEvent(e))
			case e.Kind == watch.FindingRaised && strings.Contains("member-key-drift member-issuer-drift member-audience-drift", e.ID):
				t.Errorf("healthy roll: %s", watch.FormatEvent(e))
			case e.Kind == watch.FindingRaised:
				transient[e.ID+" "+e.Member] = e.Time
			case e.Kind == watch.FindingCleared:
				if at, ok := transient[e.ID+" "+e.Member]; ok {
					t.Logf("transient finding during the roll (%s): %s %s lasted %s", version, e.ID, e.Member, e.Time.Sub(at).Round(time.Millisecond))
					delete(transient, e.ID+" "+e.Member)
				}
			}
		}
		if last := lastState(rec); len(last.Findings) > 0 {
			t.Errorf("findings left after the roll: %+v", last.Findings)
		}
	})
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
