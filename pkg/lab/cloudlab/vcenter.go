// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	neturl "net/url"
	"strconv"
	"sync"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Datacenter is the simulator's datacenter (VPX model).
const Datacenter = "DC0"

// admin is the vCenter administrator the scenario acts as (rotating, terminating sessions); its
// logins are not counted.
const admin, adminPassword = "administrator@vsphere.local", "admin-Passw0rd"

// VCenter is govmomi's vCenter simulator (VPX model, TLS) listening on the lab network, with one
// service account whose password can be rotated, and the VMs of the lab's nodes.
type VCenter struct {
	Addr netip.AddrPort
	User string

	model  *simulator.Model
	server *simulator.Server

	mu                 sync.Mutex
	pass               string
	accepted, rejected int
	vms                map[string]string // VM name -> BIOS UUID
}

// StartVCenter starts the simulator on ip (a free port) with VMs named after nodes, accepting
// user/pass for the service account.
func StartVCenter(ctx context.Context, ip netip.Addr, user, pass string, nodes []string) (*VCenter, error) {
	m := simulator.VPX()
	m.Machine = max(m.Machine, len(nodes)) // per resource pool: at least len(nodes) VMs
	if err := m.Create(); err != nil {
		return nil, fmt.Errorf("vcsim model: %w", err)
	}
	m.Service.TLS = new(tls.Config)
	m.Service.RegisterEndpoints = true // the vAPI (tagging) endpoints
	m.Service.Listen = &neturl.URL{Host: net.JoinHostPort(ip.String(), "0"), User: neturl.UserPassword(user, pass)}
	v := &VCenter{User: user, pass: pass, model: m, vms: map[string]string{}}
	m.Service.Context.Map.SessionManager().ValidLogin = v.validLogin
	v.server = m.Service.NewServer()
	port, _ := strconv.Atoi(v.server.URL.Port())
	v.Addr = netip.AddrPortFrom(ip, uint16(port))
	if err := v.nameVMs(ctx, nodes); err != nil {
		v.Close()
		return nil, err
	}
	if err := v.tagTopology(ctx); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

func (v *VCenter) validLogin(req *types.Login) bool {
	if req.UserName == admin {
		return req.Password == adminPassword
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	ok := req.UserName == v.User && req.Password == v.pass
	if ok {
		v.accepted++
	} else {
		v.rejected++
	}
	return ok
}

// Close stops the simulator.
func (v *VCenter) Close() { v.server.Close(); v.model.Remove() }

// Server is the host vCenter is reached at (kubespray's vsphere_vcenter_ip).
func (v *VCenter) Server() string { return v.Addr.Addr().String() }

// Port is its port.
func (v *VCenter) Port() int { return int(v.Addr.Port()) }

// Password is the service account's current password.
func (v *VCenter) Password() string { v.mu.Lock(); defer v.mu.Unlock(); return v.pass }

// Cloud is "vCenter".
func (v *VCenter) Cloud() string { return "vCenter" }

// Rotate changes the service account's password, as the directory's rotation policy does. Its
// sessions stay valid (vCenter does not end them on a password change).
func (v *VCenter) Rotate(_ context.Context, newPass string) error {
	v.mu.Lock()
	v.pass = newPass
	v.mu.Unlock()
	return nil
}

// Logins are the service account's login attempts so far: accepted and rejected.
func (v *VCenter) Logins() (accepted, rejected int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.accepted, v.rejected
}

// VMUUID is the BIOS UUID of the VM named name ("" if there is none).
func (v *VCenter) VMUUID(name string) string { v.mu.Lock(); defer v.mu.Unlock(); return v.vms[name] }

// client logs in as the administrator.
func (v *VCenter) client(ctx context.Context) (*govmomi.Client, error) {
	u := &neturl.URL{Scheme: "https", Host: v.Addr.String(), Path: "/sdk", User: adminUser()}
	c, err := govmomi.NewClient(ctx, u, true)
	if err != nil {
		return nil, fmt.Errorf("vcsim: administrator login: %w", err)
	}
	return c, nil
}

func adminUser() *neturl.Userinfo { return neturl.UserPassword(admin, adminPassword) }

// nameVMs renames the first len(nodes) VMs after the nodes and records their UUIDs.
func (v *VCenter) nameVMs(ctx context.Context, nodes []string) error {
	c, err := v.client(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = c.Logout(context.WithoutCancel(ctx)) }()
	f := find.NewFinder(c.Client, true)
	dc, err := f.Datacenter(ctx, Datacenter)
	if err != nil {
		return fmt.Errorf("vcsim: %w", err)
	}
	f.SetDatacenter(dc)
	vms, err := f.VirtualMachineList(ctx, "*")
	if err != nil {
		return fmt.Errorf("vcsim: list VMs: %w", err)
	}
	if len(vms) < len(nodes) {
		return fmt.Errorf("vcsim: %d VMs for %d nodes", len(vms), len(nodes))
	}
	for i, n := range nodes {
		task, err := vms[i].Rename(ctx, n)
		if err == nil {
			err = task.Wait(ctx)
		}
		if err != nil {
			return fmt.Errorf("vcsim: rename VM to %s: %w", n, err)
		}
		v.mu.Lock()
		v.vms[n] = vms[i].UUID(ctx)
		v.mu.Unlock()
	}
	return nil
}

// EndSessions ends every session of the service account, as vCenter does when they idle out:
// its consumers must log in again on their next call. It says how many it ended.
func (v *VCenter) EndSessions(ctx context.Context) (string, error) {
	c, err := v.client(ctx)
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Logout(context.WithoutCancel(ctx)) }()
	var sm mo.SessionManager
	if err := c.RetrieveOne(ctx, *c.ServiceContent.SessionManager, []string{"sessionList"}, &sm); err != nil {
		return "", fmt.Errorf("vcsim: session list: %w", err)
	}
	var ids []string
	for _, s := range sm.SessionList {
		if s.UserName == v.User {
			ids = append(ids, s.Key)
		}
	}
	if len(ids) == 0 {
		return "none open", nil
	}
	if err := session.NewManager(c.Client).TerminateSession(ctx, ids); err != nil {
		return "", fmt.Errorf("vcsim: terminate sessions: %w", err)
	}
	return fmt.Sprintf("%d terminated", len(ids)), nil
}
