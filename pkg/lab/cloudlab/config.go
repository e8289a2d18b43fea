// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// KubesprayConfig is /etc/kubernetes/cloud_config as kubespray renders it for the in-tree vSphere
// provider (roles/kubernetes/node/templates/cloud-configs/vsphere-cloud-config.j2), for a host
// whose VM has BIOS UUID vmUUID ("" leaves vm-uuid out: the provider then reads the DMI serial).
// With zones, it has the [Labels] section kubespray writes when vsphere_region_category and
// vsphere_zone_category are set: the provider then labels each node with the region and zone of
// its VM's tags, which the kubelet reads from vCenter every time it builds its Node object.
func KubesprayConfig(v *VCenter, password, vmUUID string, zones bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "[Global]\nuser = %s\npassword = %s\nport = %d\ninsecure-flag = 1\ndatacenters = %q\n",
		quote(v.User), quote(password), v.Port(), Datacenter)
	if vmUUID != "" {
		fmt.Fprintf(&b, "vm-uuid = %q\n", vmUUID)
	}
	fmt.Fprintf(&b, "\n[VirtualCenter %q]\n\n[Workspace]\nserver = %q\ndatacenter = %q\nfolder = \"vm\"\ndefault-datastore = \"LocalDS_0\"\n\n[Disk]\nscsicontrollertype = pvscsi\n",
		v.Server(), v.Server(), Datacenter)
	if zones {
		fmt.Fprintf(&b, "\n[Labels]\nregion = %q\nzone = %q\n", RegionCategory, ZoneCategory)
	}
	return []byte(b.String())
}

// quote is a gcfg double-quoted value.
func quote(s string) string { return strconv.Quote(s) }

// writeFile writes data to path, readable by root only (it holds a password).
func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("cloud config: %w", err)
	}
	return nil
}
