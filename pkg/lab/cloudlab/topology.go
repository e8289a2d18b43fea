// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25/mo"

	// The vAPI endpoints (tagging) on the simulator's server.
	_ "github.com/vmware/govmomi/vapi/simulator"
)

// The tag categories vsphere.conf's [Labels] names, and the tags the simulator's inventory
// carries: Region on the datacenter, Zone on every host (the in-tree provider reads the tags of
// the VM's host and its ancestors, host first).
const (
	RegionCategory = "k8s-region"
	ZoneCategory   = "k8s-zone"
	Region         = "region-1"
	Zone           = "zone-a"
)

// tagTopology creates the region and zone categories and tags, as the administrator does for the
// provider's [Labels], and attaches them.
func (v *VCenter) tagTopology(ctx context.Context) error {
	c, err := v.client(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = c.Logout(context.WithoutCancel(ctx)) }()
	rc := rest.NewClient(c.Client)
	if err := rc.Login(ctx, adminUser()); err != nil {
		return fmt.Errorf("vcsim: vAPI login: %w", err)
	}
	defer func() { _ = rc.Logout(context.WithoutCancel(ctx)) }()
	f := find.NewFinder(c.Client, true)
	dc, err := f.Datacenter(ctx, Datacenter)
	if err != nil {
		return fmt.Errorf("vcsim: %w", err)
	}
	f.SetDatacenter(dc)
	hosts, err := f.HostSystemList(ctx, "*")
	if err != nil {
		return fmt.Errorf("vcsim: list hosts: %w", err)
	}
	m := tags.NewManager(rc)
	attach := map[string][]mo.Reference{RegionCategory: {dc}}
	for _, h := range hosts {
		attach[ZoneCategory] = append(attach[ZoneCategory], h)
	}
	for _, t := range []struct{ category, tag string }{{RegionCategory, Region}, {ZoneCategory, Zone}} {
		catID, err := m.CreateCategory(ctx, &tags.Category{Name: t.category, Cardinality: "SINGLE",
			AssociableTypes: []string{"Datacenter", "HostSystem", "ClusterComputeResource"}})
		if err != nil {
			return fmt.Errorf("vcsim: category %s: %w", t.category, err)
		}
		tagID, err := m.CreateTag(ctx, &tags.Tag{Name: t.tag, CategoryID: catID})
		if err != nil {
			return fmt.Errorf("vcsim: tag %s: %w", t.tag, err)
		}
		if err := m.AttachTagToMultipleObjects(ctx, tagID, attach[t.category]); err != nil {
			return fmt.Errorf("vcsim: attach tag %s: %w", t.tag, err)
		}
	}
	return nil
}
