// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/credwatch/credwatch/pkg/lab"
)

// OCCMSecret is the OpenStack cloud controller manager's Secret, as its manifests name it
// (kube-system/cloud-config, key cloud.conf).
const OCCMSecret = "cloud-config"

// OpenStack is the OpenStack side of a cloud lab: a real Keystone (its administrator's view),
// reached by the lab's hosts through a relay the lab's Prepare hook starts on the lab network.
type OpenStack struct {
	Admin KeystoneAdmin
	// User, Password and Project are the service account the cluster was deployed with.
	User, Password, Project string

	// KS is the relay, once the lab has started it.
	KS *Keystone
}

// CloudConf is the OpenStack cloud controller manager's cloud.conf for password.
func (o *OpenStack) CloudConf(password string) []byte {
	return fmt.Appendf(nil, "[Global]\nauth-url = %s\nusername = %s\npassword = %s\ntenant-name = %s\ndomain-name = Default\nregion = RegionOne\n",
		quote(o.KS.URL), quote(o.User), quote(password), quote(o.Project))
}

// External is the lab's CloudOptions for the external era on OpenStack: kubelets with
// --cloud-provider=external and the OpenStack cloud controller manager deployed as its manifest
// deploys it (openstack-cloud-controller-manager-ds.yaml: the Secret mounted at /etc/config,
// --cloud-config=$(CLOUD_CONFIG)); its image must be in lab.Options.ExtraImages (CCMImageTarball).
func (o *OpenStack) External() *lab.CloudOptions {
	return &lab.CloudOptions{
		Provider: lab.CloudExternal,
		Prepare: func(ctx context.Context, l *lab.Lab) error {
			if l.Network() == nil {
				return errors.New("cloud lab: needs the hosts network")
			}
			ks, err := StartKeystone(l.Network().Gateway(), o.Admin)
			if err != nil {
				return err
			}
			o.KS = ks
			cs, err := kubernetes.NewForConfig(l.RESTConfig())
			if err != nil {
				return err
			}
			if err := o.WriteSecret(ctx, cs, o.Password); err != nil {
				return err
			}
			return deployCCM(ctx, cs, ccmSpec{name: OCCMName, image: OCCMImage, mountPath: "/etc/config",
				args:   []string{"--cloud-config=$(CLOUD_CONFIG)", "--cloud-provider=openstack", "--use-service-account-credentials=false"},
				env:    []corev1.EnvVar{{Name: "CLOUD_CONFIG", Value: "/etc/config/cloud.conf"}},
				volume: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: OCCMSecret}}})
		},
	}
}

// WriteSecret creates or updates the Secret cloud-config with a cloud.conf holding password.
func (o *OpenStack) WriteSecret(ctx context.Context, cs kubernetes.Interface, password string) error {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: OCCMSecret, Namespace: cpiNamespace},
		Data:       map[string][]byte{"cloud.conf": o.CloudConf(password)},
	}
	return applySecret(ctx, cs, sec)
}

// Close stops the relay.
func (o *OpenStack) Close() {
	if o.KS != nil {
		o.KS.Close()
	}
}
