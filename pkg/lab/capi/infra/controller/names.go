// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package controller

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/credwatch/credwatch/pkg/lab/node"
)

// HostName is the lab host of the LabMachine called name: name itself when it is a valid
// node name (a lower-case DNS label of at most node.MaxNameLen characters; KubeadmControlPlane
// names machines KCP-NAME-xxxxx, so w1-control-plane-abcde is kept), else a short deterministic
// one: the name's first characters, lower-cased, with every character a DNS label does not
// allow turned into '-', then '-' and 8 hex digits of the whole name's FNV-1a hash, at most
// node.MaxNameLen characters in all. Two LabMachines of one name in two namespaces share a
// host name: a lab runs one workload cluster per namespace at most, with distinct names.
func HostName(name string) string {
	if node.ValidName(name) {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if b.Len() == node.MaxNameLen-len(suffix) {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	prefix := strings.Trim(b.String(), "-")
	if prefix == "" {
		return "m" + suffix
	}
	return prefix + suffix
}
