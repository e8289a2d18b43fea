// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package tenant

import (
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

func TestOptionsCompleteNode(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    Options
		want string
	}{
		{"default node", Options{Namespace: "a"}, "lab-node-1"},
		{"named node", Options{Namespace: "a", NodeName: "n"}, "n"},
		{"unscheduled", Options{Namespace: "a", NodeName: "n", Unscheduled: true}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.o.complete(); err != nil {
				t.Fatal(err)
			}
			if tt.o.NodeName != tt.want {
				t.Errorf("NodeName = %q, want %q", tt.o.NodeName, tt.want)
			}
		})
	}
}
