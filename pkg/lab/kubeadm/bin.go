// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package kubeadm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Version is the kubeadm line the lab builds (Cluster API v1.8's) and CrictlVersion the crictl
// kubeadm 1.30 runs (hack/labbin/build-capi.sh).
const (
	Version       = "v1.30.14"
	CrictlVersion = "v1.34.0"
	MakeTarget    = "make capi-binaries"
)

// Binaries are the programs a kubeadm host needs besides the kubelet.
type Binaries struct {
	Kubeadm, Crictl string
}

// FindBinaries returns kubeadm and crictl under binDir (lab.DefaultBinDir), or an error naming
// what is missing and MakeTarget.
func FindBinaries(binDir string) (Binaries, error) {
	b := Binaries{
		Kubeadm: filepath.Join(binDir, Version, "kubeadm"),
		Crictl:  filepath.Join(binDir, "crictl-"+CrictlVersion, "crictl"),
	}
	var errs []error
	for _, p := range []string{b.Kubeadm, b.Crictl} {
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			errs = append(errs, fmt.Errorf("%s not found", p))
		}
	}
	if len(errs) > 0 {
		return Binaries{}, fmt.Errorf("%w: run `%s` (or set CREDWATCH_LAB_BIN)", errors.Join(errs...), MakeTarget)
	}
	return b, nil
}
