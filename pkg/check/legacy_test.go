// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	metafake "k8s.io/client-go/metadata/fake"
	restfake "k8s.io/client-go/rest/fake"
	clienttesting "k8s.io/client-go/testing"
)

// noStream is a REST client whose streamed lists fail: the reads fall back to pages through the
// fake metadata client.
var noStream = &restfake.RESTClient{NegotiatedSerializer: scheme.Codecs.WithoutConversion(), Err: errors.New("no stream in this test")}

// TestListLegacySecrets: the inventory reads Secret metadata, and a forbidden list (the
// credwatch-legacy-tokens ClusterRole not bound) says the inventory is opt-in and how to enable
// it, keeping "forbidden" for the skipped check's reason.
func TestListLegacySecrets(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Resource: "secrets"}
	tests := []struct {
		name    string
		listErr error
		want    []string // substrings of the error; nil: success
		items   int
	}{
		{"allowed", nil, nil, 1},
		{"forbidden", apierrors.NewForbidden(gr, "", errors.New(`User "u" cannot list resource "secrets"`)),
			[]string{"legacy-token inventory is opt-in", "credwatch-legacy-tokens", "forbidden"}, 0},
		{"other error", apierrors.NewServiceUnavailable("etcd down"),
			[]string{"list secrets of type kubernetes.io/service-account-token (metadata only)", "etcd down"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			scheme := runtime.NewScheme()
			if err := metav1.AddMetaToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			sec := &metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "old-token", Annotations: map[string]string{annotSAName: "sa"}},
			}
			mc := metafake.NewSimpleMetadataClient(scheme, sec)
			if tt.listErr != nil {
				mc.PrependReactor("list", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, tt.listErr
				})
			}
			got, _, err := listLegacySecrets(context.Background(), &Config{Timeout: time.Minute}, mc, noStream)
			if tt.want == nil {
				if err != nil || len(got) != tt.items || got[0].ServiceAccount != "sa" {
					t.Fatalf("got %+v, %v; want %d secret of sa", got, err, tt.items)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %+v, want an error", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
