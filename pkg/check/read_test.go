// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// fakeServer plays the list calls of one resource of 7 pods, recording each call's options in a
// short form.
type fakeServer struct {
	mu    sync.Mutex
	calls []string
	// errs fails a call whose short form has this prefix.
	errs map[string]error
	// body replaces the streamed response.
	body []byte
}

const fakePods = 7

func pod(ns string, i int) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%d", i)}}
}

// protoList is a list of items as the apiserver sends it in protobuf.
func protoList(t testing.TB, list runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := scheme.Codecs.EncoderForVersion(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), corev1.SchemeGroupVersion)
	if err := enc.Encode(list, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (s *fakeServer) call(c string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	for p, err := range s.errs {
		if strings.HasPrefix(c, p) {
			return err
		}
	}
	return nil
}

func (s *fakeServer) page(o metav1.ListOptions) ([]corev1.Pod, metav1.ListMeta) {
	from := 0
	if o.Continue != "" {
		fmt.Sscan(o.Continue, &from)
	}
	to := fakePods
	if o.Limit > 0 && from+int(o.Limit) < fakePods {
		to = from + int(o.Limit)
	}
	var items []corev1.Pod
	for i := from; i < to; i++ {
		items = append(items, pod("ns", i))
	}
	lm := metav1.ListMeta{ResourceVersion: "42"}
	if to < fakePods {
		lm.Continue = fmt.Sprint(to)
	}
	return items, lm
}

func (s *fakeServer) lister(t testing.TB) lister[corev1.Pod] {
	return lister[corev1.Pod]{what: "pods", unmarshal: func(b []byte, p *corev1.Pod) error { return p.Unmarshal(b) },
		stream: func(_ context.Context, o metav1.ListOptions) (io.ReadCloser, error) {
			if err := s.call(fmt.Sprintf("stream limit=%d rv=%q match=%s", o.Limit, o.ResourceVersion, o.ResourceVersionMatch)); err != nil {
				return nil, err
			}
			if s.body != nil {
				return io.NopCloser(bytes.NewReader(s.body)), nil
			}
			items, lm := s.page(o)
			return io.NopCloser(bytes.NewReader(protoList(t, &corev1.PodList{ListMeta: lm, Items: items}))), nil
		},
		list: func(_ context.Context, o metav1.ListOptions) ([]corev1.Pod, metav1.ListMeta, error) {
			if err := s.call(fmt.Sprintf("list limit=%d rv=%q continue=%q", o.Limit, o.ResourceVersion, o.Continue)); err != nil {
				return nil, metav1.ListMeta{}, err
			}
			items, lm := s.page(o)
			return items, lm, nil
		}}
}

// TestRead: each way of reading and each fallback, named by the calls the server sees.
func TestRead(t *testing.T) {
	t.Parallel()
	const (
		fromCache = `stream limit=0 rv="0" match=`
		bigPage   = `stream limit=5000 rv="" match=`
		page      = `list limit=500 rv="" continue=""`
	)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", fmt.Errorf("no"))
	down := apierrors.NewServiceUnavailable("etcd down")
	type readFunc func(context.Context, *Config, lister[corev1.Pod], func(*corev1.Pod) string) ([]string, string, error)
	cached, consistent := readCached[corev1.Pod, string], readConsistent[corev1.Pod, string]
	tests := []struct {
		name    string
		read    readFunc
		mode    InventoryRead
		errs    map[string]error
		body    []byte
		wantHow string
		want    []string // the calls
		wantErr string
	}{
		{"cached: one list from the watch cache", cached, ReadCache, nil, nil, HowCache, []string{fromCache}, ""},
		{"cached: the cache fails, consistent large pages", cached, ReadCache, map[string]error{fromCache: down}, nil,
			HowLargePages, []string{fromCache, bigPage}, ""},
		{"cached: JSON answers, pages decoded whole", cached, ReadCache, nil, []byte(`{"kind":"PodList","items":[]}`),
			HowPaged, []string{fromCache, bigPage, page}, ""},
		{"cached: truncated answers, pages decoded whole", cached, ReadCache, nil, []byte("k8s\x00\x12\xff\x01\x12"),
			HowPaged, []string{fromCache, bigPage, page}, ""},
		{"cached: forbidden, no fallback", cached, ReadCache, map[string]error{"stream": forbidden}, nil,
			"", []string{fromCache}, "forbidden"},
		{"cached: every read fails, the last one's error", cached, ReadCache, map[string]error{"list": down, "stream": down}, nil,
			HowPaged, []string{fromCache, bigPage, page}, "list pods: etcd down"},
		{"cached, ReadPaged", cached, ReadPaged, nil, nil, HowPaged, []string{page}, ""},
		{"consistent: large pages", consistent, ReadCache, nil, nil, HowLargePages, []string{bigPage}, ""},
		{"consistent: forbidden", consistent, ReadCache, map[string]error{"stream": forbidden}, nil,
			HowLargePages, []string{bigPage}, "forbidden"},
		{"consistent, ReadPaged", consistent, ReadPaged, nil, nil, HowPaged, []string{page}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &fakeServer{errs: tt.errs, body: tt.body}
			got, how, err := tt.read(context.Background(), &Config{Timeout: time.Minute, Inventory: tt.mode}, s.lister(t),
				func(p *corev1.Pod) string { return p.Name })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tt.wantErr)
				}
			} else if err != nil || len(got) != fakePods || got[fakePods-1] != fmt.Sprintf("p%d", fakePods-1) {
				t.Fatalf("got %v, %v; want %d pods", got, err, fakePods)
			}
			if how != tt.wantHow {
				t.Errorf("read %q, want %q", how, tt.wantHow)
			}
			if !slices.Equal(s.calls, tt.want) {
				t.Errorf("calls\n%s\nwant\n%s", strings.Join(s.calls, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
