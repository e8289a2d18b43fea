// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package kubelet reads what the API says about node agents that cannot be asked directly: the
// "Starting kubelet." Events every kubelet records at start-up, and from them, which kubelets
// restart in a loop. check raises kubelet-crashloop from it; cloud names a looping kubelet among
// the consumers of a rejected credential.
package kubelet
