// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// TestDecodeList: a list the protobuf serializer wrote is read back item by item, with its
// ListMeta; anything else is an error.
func TestDecodeList(t *testing.T) {
	t.Parallel()
	pods := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "c"}}
	for i := range 3 {
		p := pod("ns", i)
		p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}
		pods.Items = append(pods.Items, p)
	}
	metaScheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(metaScheme); err != nil {
		t.Fatal(err)
	}
	var metaBody bytes.Buffer
	metaList := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"},
		Items: []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Name: "m", Labels: map[string]string{"k": "v"}}}}}
	if err := protobuf.NewSerializer(metaScheme, metaScheme).Encode(metaList, &metaBody); err != nil {
		t.Fatal(err)
	}
	full := protoList(t, pods)
	tests := []struct {
		name    string
		body    []byte
		decode  func([]byte) (string, error)
		want    []string
		wantRV  string
		wantErr string
	}{
		{"pods", full, func(b []byte) (string, error) {
			var p corev1.Pod
			err := p.Unmarshal(b)
			return p.Name + ":" + p.Spec.Volumes[0].Secret.SecretName, err
		}, []string{"p0:s", "p1:s", "p2:s"}, "42", ""},
		{"metadata", metaBody.Bytes(), func(b []byte) (string, error) {
			var m metav1.PartialObjectMetadata
			err := m.Unmarshal(b)
			return m.Name + ":" + m.Labels["k"], err
		}, []string{"m:v"}, "", ""},
		{"empty list", protoList(t, &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}}), nil, nil, "7", ""},
		{"JSON", []byte(`{"kind":"PodList"}`), nil, nil, "", errNotProtobuf.Error()},
		{"truncated", full[:len(full)/2], func(b []byte) (string, error) { return "", nil }, nil, "", "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			lm, err := decodeList(bytes.NewReader(tt.body), func(b []byte) error {
				s, err := tt.decode(b)
				got = append(got, s)
				return err
			})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) && !errors.Is(err, errNotProtobuf) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") || lm.ResourceVersion != tt.wantRV {
				t.Fatalf("got %v rv %q, %v; want %v rv %q", got, lm.ResourceVersion, err, tt.want, tt.wantRV)
			}
		})
	}
}
