// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight_test

import (
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/preflight"
	"github.com/credwatch/credwatch/pkg/preflight/input"
)

// FuzzSignerPlane: a KubeadmControlPlane whose files (an AuthenticationConfiguration, kubeadm
// patches) and flags are arbitrary, predicted against a fixed current one: Run answers (a report
// or an error) and never panics.
func FuzzSignerPlane(f *testing.F) {
	args := "          service-account-signing-endpoint: /run/s.sock\n          authentication-config: /authn.yaml\n"
	f.Add(args, "    - path: /authn.yaml\n      content: |\n        apiVersion: apiserver.config.k8s.io/v1\n        kind: AuthenticationConfiguration\n        jwt:\n        - issuer:\n            url: https://kubernetes.default.svc.cluster.local\n", int64(300))
	f.Add(args, "    - path: /p/kube-apiserver+json.json\n      content: '[{\"op\":\"remove\",\"path\":\"/spec/containers/0/command/1\"}]'\n", int64(0))
	f.Fuzz(func(t *testing.T, extraArgs, files string, maxExp int64) {
		cur := &input.Set{}
		if err := cur.Add("current.yaml", []byte(kcp("          profiling: \"true\"\n", "", "", ""))); err != nil {
			t.Fatal(err)
		}
		pl := &input.Set{}
		patches := "    initConfiguration:\n      patches:\n        directory: /p\n"
		if pl.Add("planned.yaml", []byte(kcp(extraArgs, "", files, patches))) != nil || pl.Empty() {
			return
		}
		_, _ = preflight.Run(preflight.Config{Current: cur, Planned: pl, Signer: preflight.Signer{MaxTokenExpiration: time.Duration(maxExp) * time.Second}})
	})
}
