package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"gopkg.in/gcfg.v1"
	v1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"
)

// openStackName is the provider name of the OpenStack cloud controller manager.
const openStackName = "openstack"

// occmConfig is the part of the OpenStack cloud controller manager's cloud.conf
// (cloud-provider-openstack pkg/client/client.go AuthOpts) the lab uses.
type occmConfig struct {
	Global struct {
		AuthURL    string `gcfg:"auth-url"`
		Username   string `gcfg:"username"`
		Password   string `gcfg:"password"`
		TenantName string `gcfg:"tenant-name"`
		DomainName string `gcfg:"domain-name"`
		Region     string `gcfg:"region"`
		// TLSInsecure is read so a real cloud.conf parses.
		TLSInsecure bool `gcfg:"tls-insecure"`
	}
}

// openStack is an OpenStack provider on gophercloud, built as cloud-provider-openstack builds
// its own: the config is read once, the client authenticates when the provider is created (a
// rejected password fails the factory, and the cloud controller manager exits), and it
// re-authenticates with the same options when Keystone answers 401 (AllowReauth).
//
// The lab has Keystone but no Nova: where the real provider looks the node's server up in Nova,
// this one makes an authenticated Keystone call (GET /v3/auth/projects, through the same
// re-authenticating client) and derives the instance ID from the node name.
type openStack struct {
	identity *gophercloud.ServiceClient
}

func newOpenStack(r io.Reader) (cloudprovider.Interface, error) {
	if r == nil {
		return nil, errors.New("no OpenStack cloud config file")
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var cfg occmConfig
	if err := gcfg.FatalOnly(gcfg.ReadStringInto(&cfg, string(data))); err != nil {
		klog.Warningf("failed to read config: %v", err)
		return nil, err
	}
	g := cfg.Global
	opts := gophercloud.AuthOptions{
		IdentityEndpoint: g.AuthURL, Username: g.Username, Password: g.Password, DomainName: g.DomainName,
		Scope: &gophercloud.AuthScope{ProjectName: g.TenantName, DomainName: g.DomainName}, AllowReauth: true,
	}
	ctx := context.Background()
	provider, err := openstack.NewClient(g.AuthURL)
	if err == nil {
		provider.UserAgent.Prepend("openstack-cloud-controller-manager")
		err = openstack.Authenticate(ctx, provider, opts)
	}
	if err != nil {
		klog.Warningf("New openstack client created failed with config: %v", err)
		return nil, err
	}
	// The identity endpoint is the configured one, not the catalog's (the lab's catalog names
	// Keystone's 127.0.0.1, which the nodes cannot reach).
	identity, err := openstack.NewIdentityV3(provider, gophercloud.EndpointOpts{})
	if err != nil {
		return nil, err
	}
	klog.Infof("Authenticated to Keystone %s as %s", g.AuthURL, g.Username)
	return &openStack{identity: identity}, nil
}

func (o *openStack) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}

func (o *openStack) InstancesV2() (cloudprovider.InstancesV2, bool) { return o, true }

// server stands for Nova's lookup of the node's server: an authenticated call, then an ID.
func (o *openStack) server(ctx context.Context, node *v1.Node) (string, error) {
	if _, err := projects.ListAvailable(o.identity).AllPages(ctx); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(node.Name))
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]), nil
}

func (o *openStack) InstanceExists(ctx context.Context, node *v1.Node) (bool, error) {
	_, err := o.server(ctx, node)
	return err == nil, err
}

func (o *openStack) InstanceShutdown(ctx context.Context, node *v1.Node) (bool, error) {
	_, err := o.server(ctx, node)
	return false, err
}

func (o *openStack) InstanceMetadata(ctx context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	id, err := o.server(ctx, node)
	if err != nil {
		return nil, err
	}
	addrs := []v1.NodeAddress{{Type: v1.NodeHostName, Address: node.Name}}
	if ip := node.Annotations[cloudproviderapi.AnnotationAlphaProvidedIPAddr]; ip != "" {
		addrs = append(addrs, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
	}
	return &cloudprovider.InstanceMetadata{ProviderID: "openstack:///" + id, InstanceType: "m1.lab", NodeAddresses: addrs}, nil
}

func (o *openStack) LoadBalancer() (cloudprovider.LoadBalancer, bool) { return nil, false }
func (o *openStack) Instances() (cloudprovider.Instances, bool)       { return nil, false }
func (o *openStack) Zones() (cloudprovider.Zones, bool)               { return nil, false }
func (o *openStack) Clusters() (cloudprovider.Clusters, bool)         { return nil, false }
func (o *openStack) Routes() (cloudprovider.Routes, bool)             { return nil, false }
func (o *openStack) ProviderName() string                             { return openStackName }
func (o *openStack) HasClusterID() bool                               { return true }
