// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEtcdAPI checks the gateway client against replies shaped like etcd v3.6's (captured with
// curl from the lab's etcd): uint64 IDs as strings, errors as {"code","message"}, and fail-over
// only when an endpoint cannot be reached.
func TestEtcdAPI(t *testing.T) {
	var removed string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/v3/cluster/member/add":
			if string(body) != `{"peerURLs":["http://127.0.0.78:2380"]}` {
				t.Errorf("add request %s", body)
			}
			_, _ = io.WriteString(w, `{"header":{"cluster_id":"3460116363838020990"},"member":{"ID":"11295851679227236502","peerURLs":["http://127.0.0.78:2380"]},"members":[{"ID":"7501010807256764859","name":"a","peerURLs":["http://127.0.0.77:2380"],"clientURLs":["http://127.0.0.77:2379"]},{"ID":"11295851679227236502","peerURLs":["http://127.0.0.78:2380"]}]}`)
		case "/v3/cluster/member/list":
			_, _ = io.WriteString(w, `{"members":[{"ID":"7501010807256764859","name":"a","peerURLs":["http://127.0.0.77:2380"]}]}`)
		case "/v3/cluster/member/remove":
			removed = string(body)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"code":14,"message":"etcdserver: unhealthy cluster"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // an endpoint that refuses connections comes first
	a := NewClient([]string{dead.URL, srv.URL})
	ctx := context.Background()

	add, err := a.MemberAdd(ctx, []string{"http://127.0.0.78:2380"})
	if err != nil {
		t.Fatalf("MemberAdd: %v", err)
	}
	if add.Member.ID != 11295851679227236502 || len(add.Members) != 2 || add.Members[0].Name != "a" {
		t.Errorf("MemberAdd = %+v", add)
	}
	list, err := a.MemberList(ctx)
	if err != nil || len(list) != 1 || list[0].ID != 7501010807256764859 || list[0].PeerURLs[0] != "http://127.0.0.77:2380" {
		t.Errorf("MemberList = %+v, %v", list, err)
	}
	err = a.MemberRemove(ctx, 7501010807256764859)
	var ee *Error
	if !errors.As(err, &ee) || ee.Code != 14 || !strings.Contains(err.Error(), "unhealthy cluster") {
		t.Errorf("MemberRemove error = %#v, want the gateway's unhealthy-cluster error", err)
	}
	var req map[string]string
	if json.Unmarshal([]byte(removed), &req) != nil || req["ID"] != "7501010807256764859" {
		t.Errorf("remove request %s", removed)
	}

	// An error etcd returns is final; only unreachable endpoints make the client try the next one.
	if err := NewClient([]string{srv.URL, dead.URL}).MemberRemove(ctx, 1); !errors.As(err, &ee) {
		t.Errorf("error from the first endpoint: %v", err)
	}
	if _, err := NewClient([]string{dead.URL}).MemberList(ctx); err == nil || errors.As(err, &ee) {
		t.Errorf("no endpoint reachable: %v", err)
	}
	if _, err := NewClient([]string{srv.URL + "/nowhere"}).MemberList(ctx); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("non-gateway reply: %v", err)
	}
}

// TestAddedMember: after a MemberAdd that timed out, the member list says whether it happened.
func TestAddedMember(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"members":[{"ID":"7501010807256764859","name":"a","peerURLs":["http://127.0.0.77:2380"]},{"ID":"11295851679227236502","peerURLs":["http://127.0.0.78:2380"]}]}`)
	}))
	defer srv.Close()
	a := NewClient([]string{srv.URL})
	got, err := addedMember(context.Background(), a, "http://127.0.0.78:2380")
	if err != nil || got == nil || got.Member.ID != 11295851679227236502 || len(got.Members) != 2 {
		t.Errorf("addedMember(added) = %+v, %v", got, err)
	}
	if got, err := addedMember(context.Background(), a, "http://127.0.0.79:2380"); err != nil || got != nil {
		t.Errorf("addedMember(not added) = %+v, %v, want nil", got, err)
	}
}

// TestAddMemberLostAnswer is the CI failure of 2026-12-06 (the leader removed, the next add
// unanswered within its bound): the add is tried again, and a try that was applied although
// its answer was lost is found in the member list rather than added a second time.
func TestAddMemberLostAnswer(t *testing.T) {
	for _, applied := range []bool{true, false} {
		var mu sync.Mutex
		var adds, lists int
		added := false
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // so that the server notices the client leave
			mu.Lock()
			defer mu.Unlock()
			switch r.URL.Path {
			case "/v3/cluster/member/add":
				adds++
				if adds == 1 {
					added = applied
					mu.Unlock()
					<-r.Context().Done() // the answer never comes
					mu.Lock()
					return
				}
				added = true
				_, _ = io.WriteString(w, `{"member":{"ID":"2","peerURLs":["http://127.0.0.78:2380"]},"members":[{"ID":"1","name":"a","peerURLs":["http://127.0.0.77:2380"]},{"ID":"2","peerURLs":["http://127.0.0.78:2380"]}]}`)
			case "/v3/cluster/member/list":
				lists++
				ms := `{"ID":"1","name":"a","peerURLs":["http://127.0.0.77:2380"]}`
				if added {
					ms += `,{"ID":"2","peerURLs":["http://127.0.0.78:2380"]}`
				}
				_, _ = io.WriteString(w, `{"members":[`+ms+`]}`)
			}
		}))
		got, err := addMember(context.Background(), NewClient([]string{srv.URL}), "http://127.0.0.78:2380", 5*time.Second, 200*time.Millisecond)
		srv.Close()
		if err != nil || got == nil || got.Member.ID != 2 || len(got.Members) != 2 {
			t.Errorf("applied=%v: addMember = %+v, %v", applied, got, err)
		}
		if want := map[bool]int{true: 1, false: 2}[applied]; adds != want || lists != 1 {
			t.Errorf("applied=%v: %d adds and %d lists, want %d adds and 1 list", applied, adds, lists, want)
		}
	}
}
