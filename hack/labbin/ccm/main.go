// Command ccm is the lab's cloud controller manager for the external era of the vSphere story
// (credwatch's lab scenario cloud-password-rotated): the real framework, k8s.io/cloud-provider's
// cloud controller manager with its node and node-lifecycle controllers, and a small
// govmomi-backed provider "vsphere" that reads the vSphere CPI's config format and Secret
// (no vSphere CPI module is served by the Go module proxy), and a gophercloud-backed provider
// "openstack" that reads the OpenStack cloud controller manager's cloud.conf and authenticates
// to Keystone as it does.
package main

import (
	"io"
	"os"

	"k8s.io/apimachinery/pkg/util/wait"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/app"
	"k8s.io/cloud-provider/app/config"
	"k8s.io/cloud-provider/names"
	"k8s.io/cloud-provider/options"
	"k8s.io/component-base/cli"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"
)

func main() {
	cloudprovider.RegisterCloudProvider(providerName, func(r io.Reader) (cloudprovider.Interface, error) { return newProvider(r) })
	cloudprovider.RegisterCloudProvider(openStackName, newOpenStack)
	o, err := options.NewCloudControllerManagerOptions()
	if err != nil {
		klog.Fatalf("unable to initialize command options: %v", err)
	}
	cmd := app.NewCloudControllerManagerCommand(o, initCloud, app.DefaultInitFuncConstructors, names.CCMControllerAliases(), cliflag.NamedFlagSets{}, wait.NeverStop)
	os.Exit(cli.Run(cmd))
}

func initCloud(c *config.CompletedConfig) cloudprovider.Interface {
	cc := c.ComponentConfig.KubeCloudShared.CloudProvider
	cloud, err := cloudprovider.InitCloudProvider(cc.Name, cc.CloudConfigFile)
	if err != nil {
		klog.Fatalf("Cloud provider could not be initialized: %v", err)
	}
	if cloud == nil {
		klog.Fatalf("Cloud provider is nil")
	}
	return cloud
}
