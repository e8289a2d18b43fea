// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloudlab_test

import (
	"strings"
	"testing"

	"github.com/credwatch/credwatch/pkg/cloud/cloudtest"
	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/cloudlab"
	"github.com/credwatch/credwatch/pkg/lab/labtest"
)

// The external era on OpenStack: the OpenStack cloud controller manager (the lab's, on gophercloud)
// against a real Keystone.
func TestIntegrationCloudRotatedOpenStack(t *testing.T) {
	if testing.Short() {
		t.Skip("lab test: skipped under -short")
	}
	k := cloudtest.StartKeystone(t)
	o := &cloudlab.OpenStack{Admin: cloudlab.KeystoneAdmin{URL: k.URL, AdminPassword: k.AdminPassword, ServiceUserID: k.ServiceUserID},
		User: k.ServiceUser, Password: k.ServicePassword, Project: k.ServiceProject}
	t.Cleanup(o.Close)
	binDir, _ := labtest.BinDir()
	img, err := cloudlab.CCMImageTarball(binDir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := labtest.Start(t, lab.Options{Dir: shortDir(t), Members: 1, Nodes: 1, Cloud: o.External(), ExtraImages: []string{img}})
	// What this era's steps show takes a crash and a back-off: OpenStackEnv's steps wait for it.
	env, err := cloudlab.OpenStackEnv(l, o)
	if err != nil {
		t.Fatal(err)
	}
	reports := withChecks(t, l, env)
	ev := runScenario(t, env)
	c := checker{t, ev}
	const ccm = "cloud-controller-manager"
	// The reset revokes the account's tokens, but nothing asks Keystone until a node needs the cloud.
	c.untilLogin()
	s := c.step("before")
	n, _ := s.Node("node-1")
	c.want(s, !n.Uninitialized && strings.HasPrefix(n.ProviderID, "openstack:///"), "node-1 initialized: %+v", n)
	// A node joins: the running manager's revoked token is refused, gophercloud re-authenticates
	// with the old password and is refused; the DaemonSet's new Pod on that node cannot even start.
	s = c.step("sessions-ended")
	n, _ = s.Node("node-2")
	c.want(s, n.Ready && n.Uninitialized && n.ProviderID == "", "node-2 Ready but uninitialized, without providerID: %+v", n)
	c.want(s, c.pods(s, "on-new-node", "Pending"), "the Deployment pinned to the new node stays Pending")
	c.want(s, s.Has(ccm, "failed to get instance metadata for node node-2: Unable to re-authenticate"), "the running manager fails to re-authenticate and requeues")
	c.want(s, s.Has(ccm, `Cloud provider could not be initialized: could not init cloud provider "openstack"`), "the new node's manager Pod exits at start-up")
	c.want(s, warningAbout(s, "Back-off restarting failed container "+cloudlab.OCCMName), "a BackOff Warning names the manager's container")
	c.want(s, !warningAbout(s, "401") && !warningAbout(s, "Keystone") && !warningAbout(s, "authenticat"), "no Warning Event names the credential")
	// Restarting the manager (the master's reboot) turns every Pod of it into a crash loop.
	s = c.step("controller-restarted")
	c.want(s, strings.Contains(s.Restarted[ccm], "CrashLoopBackOff") || strings.Contains(s.Restarted[ccm], "exited 255"), "the restarted manager crash-loops (got %q)", s.Restarted[ccm])
	c.want(s, s.LoginsRejected > 0 && s.LoginsAccepted == 0, "its token requests are rejected")
	s = c.step("kubelet-restarted")
	c.want(s, s.Restarted["kubelet/node-1"] == "running", "the restarted kubelet keeps running (got %q)", s.Restarted["kubelet/node-1"])
	n, _ = s.Node("node-1")
	c.want(s, n.Ready && !n.Uninitialized, "node-1 Ready and still initialized: %+v", n)
	s = c.step("restored")
	c.want(s, s.LoginsAccepted > 0 && s.Restarted[ccm] == "healthy", "the restarted manager authenticates and runs (got %d accepted, %q)", s.LoginsAccepted, s.Restarted[ccm])
	c.want(s, c.pods(s, "on-new-node", "Running"), "the pinned Pod runs once node-2 is initialized")
	for _, n := range s.Nodes {
		c.want(s, n.Ready && !n.Uninitialized, "%s Ready and initialized: %+v", n.Name, n)
	}

	wantBeforeAndAfterReboot(t, reports, "cloud-credential-rejected", "cloud-login-failed", "nodes-uninitialized")
	// After the manager's restart its crash loop is a finding of its own.
	rotated := reports["kubelet-restarted"].ids()
	if !strings.Contains(rotated["controllers-not-running"], "is crash-looping") {
		t.Errorf("credwatch check after the manager's restart: no crash loop in controllers-not-running: %q", rotated["controllers-not-running"])
	}
	if !strings.Contains(rotated["cloud-credential-rejected"], "secret kube-system/"+cloudlab.OCCMSecret+" key cloud.conf") {
		t.Errorf("cloud-credential-rejected does not name the Secret: %s", rotated["cloud-credential-rejected"])
	}
	if r := reports["kubelet-restarted"]; !r.restarts("rollout restart daemonset/" + cloudlab.OCCMName) {
		t.Errorf("credwatch check on the rotated lab names no restart of daemonset/%s", cloudlab.OCCMName)
	}
}
