// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package helm tests the Helm chart deploy/helm/credwatch with Helm's own code (helm.sh/helm/v3,
// kept out of credwatch's go.mod): lint, render with Helm's engine, and a server-side dry-run of
// every rendered object against a lab's real kube-apiserver, plus the watcher's API calls made
// as the chart's service account.
package helm
