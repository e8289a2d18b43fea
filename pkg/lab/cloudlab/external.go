// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/lab"
)

// The vSphere CPI's objects, as its manifests name them (kube-system/vsphere-cloud-config with key
// vsphere.conf, kube-system/vsphere-cloud-secret with <server>.username and <server>.password).
const (
	CPIConfigMap = "vsphere-cloud-config"
	CPISecret    = "vsphere-cloud-secret"
	cpiNamespace = "kube-system"
)

// CPIConfig is the vSphere CPI's INI config naming the Secret with the credentials.
func CPIConfig(v *VCenter) []byte {
	return fmt.Appendf(nil, "[Global]\ninsecure-flag = \"true\"\nsecret-name = %q\nsecret-namespace = %q\nport = \"%d\"\n\n[VirtualCenter %q]\ndatacenters = %q\n",
		CPISecret, cpiNamespace, v.Port(), v.Server(), Datacenter)
}

// External is the lab's CloudOptions for the external era: kube-controller-manager and kubelets
// with --cloud-provider=external, and the lab's cloud controller manager deployed as the CPI's
// DaemonSet (its image must be in lab.Options.ExtraImages: CCMImageTarball), reading the CPI's
// ConfigMap and Secret.
func (s *Setup) External() *lab.CloudOptions {
	return &lab.CloudOptions{
		Provider: lab.CloudExternal,
		Prepare: func(ctx context.Context, l *lab.Lab) error {
			if err := s.start(ctx, l); err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(l.RESTConfig())
			if err != nil {
				return err
			}
			conf := CPIConfig(s.VC)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: CPIConfigMap, Namespace: cpiNamespace}, Data: map[string]string{"vsphere.conf": string(conf)}}
			if _, err := cs.CoreV1().ConfigMaps(cpiNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("cloud lab: ConfigMap %s: %w", CPIConfigMap, err)
			}
			if err := s.WriteSecret(ctx, cs, s.Password); err != nil {
				return err
			}
			return deployCCM(ctx, cs, vSphereCCM())
		},
	}
}

// WriteSecret creates or updates the CPI's Secret with password.
func (s *Setup) WriteSecret(ctx context.Context, cs kubernetes.Interface, password string) error {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: CPISecret, Namespace: cpiNamespace},
		Data: map[string][]byte{
			s.VC.Server() + ".username": []byte(s.User),
			s.VC.Server() + ".password": []byte(password),
		},
	}
	return applySecret(ctx, cs, sec)
}

// applySecret creates sec in kube-system, or updates it when it exists.
func applySecret(ctx context.Context, cs kubernetes.Interface, sec *corev1.Secret) error {
	_, err := cs.CoreV1().Secrets(cpiNamespace).Create(ctx, sec, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = cs.CoreV1().Secrets(cpiNamespace).Update(ctx, sec, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("cloud lab: Secret %s: %w", sec.Name, err)
	}
	return nil
}
