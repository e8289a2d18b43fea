// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package pki

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig writes a kubeconfig with one cluster (server, trusting caPEM), one user
// (a client certificate) and a current context joining them.
func WriteKubeconfig(file, server, user string, caPEM, certPEM, keyPEM []byte) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["credwatch-lab"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["credwatch-lab"] = &clientcmdapi.Context{Cluster: "credwatch-lab", AuthInfo: user}
	cfg.CurrentContext = "credwatch-lab"
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", file, err)
	}
	return nil
}
