// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package kubeadm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Version is the kubeadm line of Cluster API v1.8's lab, the default; Cluster API v1.14's runs
// kubeadm v1.36.3 (capi.LineOf). CrictlVersion is the crictl kubeadm runs
// (hack/labbin/build-capi.sh builds both).
const (
	Version       = "v1.30.14"
	CrictlVersion = "v1.34.0"
	MakeTarget    = "make capi-binaries"
)

// Binaries are the programs a kubeadm host needs besides the kubelet.
type Binaries struct {
	Kubeadm, Crictl string
	Version         string // kubeadm's
}

// FindBinaries returns kubeadm of version (default Version) and crictl under binDir
// (lab.DefaultBinDir), or an error naming what is missing and MakeTarget.
func FindBinaries(binDir, version string) (Binaries, error) {
	if version == "" {
		version = Version
	}
	b := Binaries{
		Kubeadm: filepath.Join(binDir, version, "kubeadm"),
		Crictl:  filepath.Join(binDir, "crictl-"+CrictlVersion, "crictl"),
		Version: version,
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
