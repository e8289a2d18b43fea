package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sync"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25/soap"
	"gopkg.in/gcfg.v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	cloudprovider "k8s.io/cloud-provider"
	cloudproviderapi "k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"
)

const providerName = "vsphere"

// cpiConfig is the part of the vSphere CPI's INI config (cloud-provider-vsphere
// pkg/common/config/types_ini_legacy.go) the lab uses.
type cpiConfig struct {
	Global struct {
		Port            string `gcfg:"port"`
		InsecureFlag    bool   `gcfg:"insecure-flag"`
		SecretName      string `gcfg:"secret-name"`
		SecretNamespace string `gcfg:"secret-namespace"`
		Datacenters     string `gcfg:"datacenters"`
	}
	VirtualCenter map[string]*struct {
		Port        string `gcfg:"port"`
		Datacenters string `gcfg:"datacenters"`
	}
}

// provider is a one-vCenter vSphere cloud provider: credentials from the Secret the config names
// (keys <server>.username and <server>.password), read again on every login, as the CPI's
// credential manager does after InvalidLogin.
type provider struct {
	cfg    cpiConfig
	server string
	dc     string
	cs     kubernetes.Interface

	mu     sync.Mutex
	client *govmomi.Client
}

func newProvider(r io.Reader) (*provider, error) {
	if r == nil {
		return nil, errors.New("no vSphere cloud config file")
	}
	p := &provider{}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if err := gcfg.FatalOnly(gcfg.ReadStringInto(&p.cfg, string(data))); err != nil {
		return nil, fmt.Errorf("vSphere config: %w", err)
	}
	for s, vc := range p.cfg.VirtualCenter {
		p.server, p.dc = s, vc.Datacenters
		if vc.Port != "" {
			p.cfg.Global.Port = vc.Port
		}
	}
	if p.server == "" || p.cfg.Global.SecretName == "" {
		return nil, errors.New("vSphere config: want one [VirtualCenter] and [Global] secret-name/secret-namespace")
	}
	if p.dc == "" {
		p.dc = p.cfg.Global.Datacenters
	}
	return p, nil
}

func (p *provider) Initialize(b cloudprovider.ControllerClientBuilder, _ <-chan struct{}) {
	p.cs = b.ClientOrDie("vsphere-cloud-controller-manager")
}

// connect returns a logged-in client, logging in again when the session has ended.
func (p *provider) connect(ctx context.Context) (*govmomi.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client != nil {
		if s, err := session.NewManager(p.client.Client).UserSession(ctx); err == nil && s != nil {
			return p.client, nil
		}
	}
	sec, err := p.cs.CoreV1().Secrets(p.cfg.Global.SecretNamespace).Get(ctx, p.cfg.Global.SecretName, metav1.GetOptions{})
	if err != nil {
		klog.Errorf("Failed to get credentials from Secret %s/%s: %v", p.cfg.Global.SecretNamespace, p.cfg.Global.SecretName, err)
		return nil, err
	}
	u, err := soap.ParseURL(p.server + ":" + p.cfg.Global.Port)
	if err != nil {
		return nil, err
	}
	u.User = url.UserPassword(string(sec.Data[p.server+".username"]), string(sec.Data[p.server+".password"]))
	c, err := govmomi.NewClient(ctx, u, p.cfg.Global.InsecureFlag)
	if err != nil {
		klog.Errorf("Cannot connect to vCenter with err: %v", err)
		return nil, err
	}
	p.client = c
	klog.Infof("Connected to vCenter %s as %s", p.server, u.User.Username())
	return c, nil
}

func (p *provider) InstancesV2() (cloudprovider.InstancesV2, bool) { return p, true }

func (p *provider) vm(ctx context.Context, node *v1.Node) (string, error) {
	c, err := p.connect(ctx)
	if err != nil {
		return "", err
	}
	f := find.NewFinder(c.Client, true)
	dc, err := f.Datacenter(ctx, p.dc)
	if err != nil {
		return "", err
	}
	f.SetDatacenter(dc)
	vm, err := f.VirtualMachine(ctx, node.Name)
	var nf *find.NotFoundError
	if errors.As(err, &nf) {
		return "", cloudprovider.InstanceNotFound
	}
	if err != nil {
		return "", err
	}
	return vm.UUID(ctx), nil
}

func (p *provider) InstanceExists(ctx context.Context, node *v1.Node) (bool, error) {
	_, err := p.vm(ctx, node)
	if errors.Is(err, cloudprovider.InstanceNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (p *provider) InstanceShutdown(ctx context.Context, node *v1.Node) (bool, error) {
	_, err := p.vm(ctx, node)
	return false, err
}

// InstanceMetadata finds the node's VM by name; its addresses are the kubelet's --node-ip (the
// simulator's guest IPs are not the lab's) and the node name.
func (p *provider) InstanceMetadata(ctx context.Context, node *v1.Node) (*cloudprovider.InstanceMetadata, error) {
	uuid, err := p.vm(ctx, node)
	if err != nil {
		return nil, err
	}
	addrs := []v1.NodeAddress{{Type: v1.NodeHostName, Address: node.Name}}
	if ip := node.Annotations[cloudproviderapi.AnnotationAlphaProvidedIPAddr]; ip != "" {
		addrs = append(addrs, v1.NodeAddress{Type: v1.NodeInternalIP, Address: ip})
	}
	return &cloudprovider.InstanceMetadata{ProviderID: "vsphere://" + uuid, InstanceType: "vsphere-vm", NodeAddresses: addrs}, nil
}

func (p *provider) LoadBalancer() (cloudprovider.LoadBalancer, bool) { return nil, false }
func (p *provider) Instances() (cloudprovider.Instances, bool)       { return nil, false }
func (p *provider) Zones() (cloudprovider.Zones, bool)               { return nil, false }
func (p *provider) Clusters() (cloudprovider.Clusters, bool)         { return nil, false }
func (p *provider) Routes() (cloudprovider.Routes, bool)             { return nil, false }
func (p *provider) ProviderName() string                             { return providerName }
func (p *provider) HasClusterID() bool                               { return true }
