// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPages: every list is read in pages of pageSize, following Continue, and a failing page
// fails the list.
func TestPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		items   int
		failAt  int // page that fails; 0 = none
		want    int
		wantErr bool
	}{
		{"one page", 3, 0, 3, false},
		{"three pages", 2*pageSize + 1, 0, 2*pageSize + 1, false},
		{"second page fails", 2 * pageSize, 2, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var limits []int64
			page := 0
			got, err := pages(context.Background(), time.Second, metav1.ListOptions{FieldSelector: "x"},
				func(_ context.Context, o metav1.ListOptions) ([]int, string, error) {
					page++
					limits = append(limits, o.Limit)
					if page == tt.failAt {
						return nil, "", errors.New("page failed")
					}
					start, _ := strconv.Atoi(o.Continue)
					end := min(start+int(o.Limit), tt.items)
					next := ""
					if end < tt.items {
						next = strconv.Itoa(end)
					}
					items := make([]int, end-start)
					return items, next, nil
				})
			if (err != nil) != tt.wantErr || len(got) != tt.want {
				t.Fatalf("got %d items, %v; want %d, error %v", len(got), err, tt.want, tt.wantErr)
			}
			if slices.ContainsFunc(limits, func(l int64) bool { return l != pageSize }) {
				t.Fatalf("page limits %v, want %d each", limits, pageSize)
			}
		})
	}
}
