// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package deploy carries the manifests the binary prints, so that an archive without the
// repository still has them (credwatch check --print-rbac).
package deploy

import (
	_ "embed"
	"slices"
)

//go:embed clusterrole.yaml
var clusterRole []byte

// ClusterRole is deploy/clusterrole.yaml: the least-privilege RBAC of credwatch check.
func ClusterRole() []byte { return slices.Clone(clusterRole) }
