package tenant

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNeedsRefresh(t *testing.T) {
	issued := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	kubelet := Token{Value: "x", IssuedAt: issued, ExpirationSeconds: 3607, Expires: issued.Add(3607 * time.Second)}
	long := Token{Value: "x", IssuedAt: issued, ExpirationSeconds: 7 * 24 * 3600, Expires: issued.Add(7 * 24 * time.Hour)}
	tests := []struct {
		name string
		tok  Token
		at   time.Duration // after issue
		want bool
	}{
		{"no token yet", Token{}, 0, true},
		{"fresh", kubelet, time.Minute, false},
		{"just before 80 %", kubelet, 2885 * time.Second, false},
		{"past 80 %", kubelet, 2887 * time.Second, true},
		{"expired", kubelet, 2 * time.Hour, true},
		{"week-long token before 24 h", long, 23 * time.Hour, false},
		{"week-long token after 24 h", long, 25 * time.Hour, true},
		{"no expiry known", Token{Value: "x"}, 48 * time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.tok.NeedsRefresh(issued.Add(tt.at)); got != tt.want {
				t.Errorf("NeedsRefresh(+%s) = %v, want %v", tt.at, got, tt.want)
			}
		})
	}
}

func TestTally(t *testing.T) {
	var ta tally
	ta.reset(time.Unix(0, 0))
	now := time.Unix(100, 0)
	ta.minted("apiserver-1", nil)
	ta.minted("apiserver-4", nil)
	ta.minted("", errTest("boom"))
	ta.request(now, "p-0", "apiserver-1", "apiserver-1", http.StatusCreated, time.Second)
	ta.request(now, "p-0", "apiserver-4", "apiserver-1", http.StatusUnauthorized, 2*time.Second)
	ta.request(now, "p-1", "apiserver-10", "apiserver-4", http.StatusUnauthorized, time.Second)
	ta.request(now, "p-1", "", "apiserver-4", 0, time.Second)
	s := ta.snapshot()
	if s.Requests != 4 || s.Unauthorized != 2 || s.NoResponse != 1 || s.TokensIssued != 2 || s.TokenErrors != 1 || s.LastError != "boom" {
		t.Fatalf("totals = %+v", s)
	}
	var names []string
	for _, m := range s.Members {
		names = append(names, m.Member)
	}
	if got, want := strings.Join(names, ","), "apiserver-1,apiserver-4,apiserver-10,"+NoResponse; got != want {
		t.Errorf("member order = %s, want %s", got, want)
	}
	if m := s.Member("apiserver-4"); m.Unauthorized != 1 || m.TokensMinted != 1 || m.Statuses[401] != 1 {
		t.Errorf("apiserver-4 = %+v", m)
	}
	if m := s.Member("apiserver-9"); m.Requests != 0 {
		t.Errorf("absent member = %+v", m)
	}
	if len(s.Samples) != 2 || s.Samples[0].ServedBy != "apiserver-4" || s.Samples[0].TokenAge != "2s" {
		t.Errorf("samples = %+v", s.Samples)
	}
	if got := s.UnauthorizedRate(); got != 0.5 {
		t.Errorf("rate = %v", got)
	}
	// The snapshot is a copy.
	s.Members[0].Statuses[201] = 99
	if ta.snapshot().Members[0].Statuses[201] != 1 {
		t.Error("snapshot shares its status map with the tally")
	}

	m := Merge(s, ta.snapshot())
	if m.Requests != 8 || m.Unauthorized != 4 || m.Member("apiserver-4").Unauthorized != 2 || len(m.Pairs) != 4 || m.TokensIssued != 4 {
		t.Errorf("merge = %+v", m)
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestOptionsComplete(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"no namespace", Options{}, "namespace is not set"},
		{"too many pods", Options{Namespace: "a", Pods: 101}, "want 1..100"},
		{"defaults", Options{Namespace: "a"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.complete()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tt.o.Pods != 2 || tt.o.ExpirationSeconds != 3607 || tt.o.ServiceAccount != "tenant" {
					t.Errorf("defaults = %+v", tt.o)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
