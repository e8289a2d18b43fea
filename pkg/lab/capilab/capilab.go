// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package capilab composes the Cluster API lab (issue 23) on a running lab, its management
// cluster: the real Cluster API managers of one release (package capi), the lab infrastructure
// provider's controller (capi/infra/controller) whose LabMachines are kubeadm hosts (package
// kubeadm) on the lab network, and one workload cluster (capi/workload) whose control plane the
// real KubeadmControlPlane controller makes with kubeadm init and join.
package capilab

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/lab"
	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/cloud"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/controller"
	"github.com/credwatch/credwatch/pkg/lab/capi/workload"
	"github.com/credwatch/credwatch/pkg/lab/controlplane/etcd"
	labimage "github.com/credwatch/credwatch/pkg/lab/image"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm"
	"github.com/credwatch/credwatch/pkg/lab/kubeadm/images"
)

// Config is one Cluster API lab.
type Config struct {
	// CAPI is the Cluster API release, one of capi.Versions(); it decides the line (capi.LineOf).
	CAPI string
	// Cluster is the workload cluster.
	Cluster workload.Config
	// BinDir is the lab's bin directory; default the lab's.
	BinDir string
	// SelfManaged puts the release's managers' images on every host, so that Move can install
	// them in the workload cluster and make it manage itself. It needs workers (Cluster.Workers),
	// where the managers run.
	SelfManaged bool
	// ProviderInCluster makes Move run the lab infrastructure provider's controller as a Pod in
	// the workload cluster, as clusterctl move moves a real provider, against the lab's cloud
	// API (package capi/infra/cloud) that the lab process serves on the lab network, instead of
	// going on in the lab process. It needs SelfManaged. Not yet run in the lab: off by default.
	ProviderInCluster bool
	// Log receives progress lines; default discarded.
	Log io.Writer
}

// Lab is a running Cluster API lab.
type Lab struct {
	cfg      Config
	mgmt     *lab.Lab
	dyn      dynamic.Interface
	managers *capi.Managers
	// inCluster are the managers installed in the workload cluster by Move (nil before).
	inCluster *capi.InCluster
	pool      *kubeadm.Pool
	// cloud holds the workload hosts and balancers; cloudSrv serves it to the provider's Pod
	// with cloudToken once Move runs it there (nil before, and without ProviderInCluster).
	cloud      *controller.LocalCloud
	cloudSrv   *cloud.Server
	cloudToken string
	ctrl       *controller.Controller
	cancel     context.CancelFunc // ends the controller's Run in this process; nil when none runs
	done       chan error
	etcdTLS    *tls.Config             // the workload etcd's client configuration, read once (Roll's goroutine only)
	etcdByURL  map[string]*etcd.Client // a client per etcd endpoint, kept across Roll's looks (its goroutine only)

	mu      sync.Mutex
	podLogs map[string]string // machine -> its host's pod log directory (notePodLogs)
}

// Start brings the Cluster API lab up on l (a lab on the release's line with the hosts network): the
// release's managers, the provider's CRDs and controller, and the workload cluster's objects. It
// returns once they are created; WaitControlPlane waits for the machines. On error what was
// started is stopped.
func Start(ctx context.Context, l *lab.Lab, cfg Config) (*Lab, error) {
	if cfg.BinDir == "" {
		cfg.BinDir = l.Options().BinDir
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if l.Network() == nil {
		return nil, errors.New("capi lab: the management lab needs the hosts network (its workload hosts join it)")
	}
	if cfg.ProviderInCluster && !cfg.SelfManaged {
		return nil, errors.New("capi lab: the provider runs in the cluster only in a self-managed one (SelfManaged)")
	}
	line := capi.LineOf(cfg.CAPI)
	if v := l.Options().Version; v != "" && v != line.Kubernetes {
		return nil, fmt.Errorf("capi lab: Cluster API %s needs a %s management cluster, the lab runs %s", cfg.CAPI, line.Kubernetes, v)
	}
	if cfg.Cluster.Version == "" {
		cfg.Cluster.Version = line.Kubernetes
	}
	if cfg.Cluster.API == "" {
		cfg.Cluster.API = line.API
	}
	objs, err := workload.Objects(cfg.Cluster)
	if err != nil {
		return nil, err
	}
	bins, err := kubeadm.FindBinaries(cfg.BinDir, line.Kubernetes)
	if err != nil {
		return nil, err
	}
	kubelet, err := lab.Binary(cfg.BinDir, line.Kubelet, "kubelet")
	if err != nil {
		return nil, err
	}
	tarball, err := images.Build(ctx, images.Config{BinDir: cfg.BinDir, Version: line.Kubernetes,
		OutDir: filepath.Join(filepath.Dir(cfg.BinDir), "images")})
	if err != nil {
		return nil, fmt.Errorf("capi lab: kubeadm images: %w", err)
	}
	tarballs := []string{tarball}
	if cfg.SelfManaged {
		if cfg.Cluster.Workers == 0 {
			return nil, errors.New("capi lab: a self-managed cluster needs a worker to run its managers")
		}
		mgrs, err := images.BuildPrograms(ctx, images.Config{BinDir: cfg.BinDir, Version: cfg.CAPI,
			OutDir: filepath.Join(filepath.Dir(cfg.BinDir), "images")}, "capi-images", capi.ImageRefs(cfg.CAPI))
		if err != nil {
			return nil, fmt.Errorf("capi lab: Cluster API images: %w", err)
		}
		// The lab images (pkg/lab/image) hold the platform controllers' program (DeployPlatform)
		// and credwatch itself, for the in-cluster watcher.
		labImages, err := labimage.Build(ctx, labimage.Config{OutDir: filepath.Join(filepath.Dir(cfg.BinDir), "images")})
		if err != nil {
			return nil, fmt.Errorf("capi lab: lab images: %w", err)
		}
		tarballs = append(tarballs, mgrs, labImages)
	}
	// The provider's controller reads Machines and Clusters in v1beta1, which v1.14 still serves
	// with a deprecation warning on every call: the warnings would bury the lab's log.
	rc := rest.CopyConfig(l.RESTConfig())
	rc.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("capi lab: client for the management cluster: %w", err)
	}
	c := &Lab{cfg: cfg, mgmt: l, dyn: dyn, done: make(chan error, 1)}
	if err := c.start(ctx, objs, kubelet, bins, tarballs); err != nil {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		return nil, errors.Join(err, c.Stop(sctx))
	}
	return c, nil
}

func (c *Lab) start(ctx context.Context, objs []*unstructured.Unstructured, kubelet string, bins kubeadm.Binaries, tarballs []string) error {
	var err error
	if c.managers, err = capi.Start(ctx, c.mgmt, capi.Options{Version: c.cfg.CAPI, BinDir: c.cfg.BinDir, Log: c.cfg.Log}); err != nil {
		return err
	}
	if err := infra.InstallCRDs(ctx, c.dyn); err != nil {
		return err
	}
	c.pool = kubeadm.NewPool(kubeadm.PoolConfig{
		Network: c.mgmt.Network(), Dir: filepath.Join(c.mgmt.Dir(), lab.CAPIHostsDir), Kubelet: kubelet, Binaries: bins,
		Images: tarballs, Log: c.cfg.Log,
	})
	c.cloud, err = controller.NewLocal(controller.LocalOptions{Hosts: poolHosts{c.pool},
		// The balancer listens where the workload hosts reach the machine: the lab network's gateway.
		Address: net.JoinHostPort(c.mgmt.Network().Gateway().String(), "0")})
	if err != nil {
		return err
	}
	c.ctrl, err = controller.New(controller.Options{Client: c.dyn, Cloud: c.cloud, Namespace: c.cfg.Cluster.Namespace, Log: c.cfg.Log})
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	go func() { c.done <- c.ctrl.Run(rctx) }()
	for _, o := range objs {
		if _, err := c.resource(o).Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("capi lab: create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	fmt.Fprintf(c.cfg.Log, "capi lab: workload cluster %s created (Cluster API %s)\n", c.cfg.Cluster.Name, c.cfg.CAPI)
	return nil
}

// resource is the dynamic client of o's kind in its namespace.
func (c *Lab) resource(o *unstructured.Unstructured) dynamic.ResourceInterface {
	return c.dyn.Resource(GVR(o.GetAPIVersion(), o.GetKind())).Namespace(o.GetNamespace())
}

// GVR is the resource of one of the workload cluster's kinds (workload.Objects' and
// KubeadmControlPlane; Machines and Secrets are controller.Machines and controller.Secrets).
func GVR(apiVersion, kind string) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	plural := map[string]string{
		"Cluster": "clusters", "KubeadmControlPlane": "kubeadmcontrolplanes",
		"LabCluster": "labclusters", "LabMachineTemplate": "labmachinetemplates",
		"KubeadmConfigTemplate": "kubeadmconfigtemplates", "MachineDeployment": "machinedeployments",
	}[kind]
	return gv.WithResource(plural)
}

// Line is the Kubernetes the lab runs for its Cluster API release.
func (c *Lab) Line() capi.Line { return capi.LineOf(c.cfg.CAPI) }

// v1beta2 reports whether the lab reads and writes Cluster API's objects in v1beta2.
func (c *Lab) v1beta2() bool { return c.Line().API == workload.V1Beta2 }

// kcp is the workload cluster's KubeadmControlPlane resource, in the release's API version.
func (c *Lab) kcp() dynamic.ResourceInterface {
	gvr := GVR(workload.ControlPlaneAPIVersion, "KubeadmControlPlane")
	gvr.Version = c.Line().API
	return c.dyn.Resource(gvr).Namespace(namespace(c.cfg.Cluster))
}

// machines is the Machine resource of the workload cluster's namespace, in the release's API
// version (the provider's controller reads v1beta1, which v1.14 still serves by conversion).
func (c *Lab) machines() dynamic.ResourceInterface {
	gvr := controller.Machines
	gvr.Version = c.Line().API
	return c.dyn.Resource(gvr).Namespace(namespace(c.cfg.Cluster))
}

// Events is the provider's timeline: every step it took, with the machine and time, in this
// process and, once Move ran it as a Pod (Config.ProviderInCluster), in its Pods (their logs).
func (c *Lab) Events() []controller.Event {
	out := c.ctrl.Events()
	if logs := c.ProviderPodLogs(); len(logs) > 0 {
		out = append(out, podSteps(logs)...)
		sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	}
	return out
}

// Pool is the workload hosts.
func (c *Lab) Pool() *kubeadm.Pool { return c.pool }

// Managers are the Cluster API managers.
func (c *Lab) Managers() *capi.Managers { return c.managers }

// Client reaches the management cluster.
func (c *Lab) Client() dynamic.Interface { return c.dyn }

// Stop ends the controller, the cloud API, the balancers, every workload host and the managers
// (the management lab stays). It does not delete the Cluster API objects: the management
// cluster goes with the lab.
func (c *Lab) Stop(ctx context.Context) error {
	var errs []error
	if c.cancel != nil {
		c.cancel()
		select {
		case err := <-c.done:
			if err != nil && !errors.Is(err, context.Canceled) {
				errs = append(errs, err)
			}
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("capi lab: controller did not stop: %w", ctx.Err()))
		}
	}
	if c.cloudSrv != nil {
		errs = append(errs, c.cloudSrv.Close(ctx))
	}
	if c.cloud != nil {
		c.cloud.Close()
	}
	if c.pool != nil {
		errs = append(errs, c.pool.Close(ctx))
	}
	if c.managers != nil {
		errs = append(errs, c.managers.Stop(ctx))
	}
	return errors.Join(errs...)
}

// poolHosts is the Pool as the controller's Hosts.
type poolHosts struct{ p *kubeadm.Pool }

func (h poolHosts) Create(ctx context.Context, name string, bootstrap []byte, meta map[string]string) (controller.Host, error) {
	host, err := h.p.Create(ctx, name, bootstrap, meta)
	if err != nil {
		return nil, err
	}
	return host, nil
}

func (h poolHosts) Delete(ctx context.Context, name string) error { return h.p.Delete(ctx, name) }
