// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package capilab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/credwatch/credwatch/pkg/lab/capi"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra"
	"github.com/credwatch/credwatch/pkg/lab/proc"
)

// Moved is what Move did: where the managers run and how long each step took.
type Moved struct {
	Node      string        `json:"node"`     // the worker the managers run on
	Install   time.Duration `json:"install"`  // clusterctl init's part: CRDs, inventory, Deployments ready
	Move      time.Duration `json:"move"`     // clusterctl move
	Log       string        `json:"log"`      // clusterctl move's output
	Objects   int           `json:"objects"`  // Cluster API objects in the workload cluster after the move
	Provider  string        `json:"provider"` // the lab provider's controller after the move: "lab process" or "pod on NODE"
	Workloads string        `json:"-"`        // the workload cluster's admin kubeconfig file
}

// Move makes the workload cluster manage itself, as a platform team does with a bootstrap
// cluster: the release's managers are installed in it as Deployments on its first worker (as
// `clusterctl init` would, from the images Config.SelfManaged put on the hosts), the real
// `clusterctl move` moves the Cluster API objects from the management lab into it, the
// management lab's managers are stopped, and the lab provider's controller goes on from the
// workload cluster (its balancers and hosts are the cloud's: they stay): in this process, or,
// with Config.ProviderInCluster, as a Pod on the same worker against the lab's cloud API
// (deployProvider). From then on the Lab's reads (ControlPlane, Roll) go to the workload
// cluster, through its own balancer.
func (c *Lab) Move(ctx context.Context) (Moved, error) {
	var mv Moved
	if !c.cfg.SelfManaged {
		return mv, errors.New("capi lab: move needs a lab started with SelfManaged")
	}
	clusterctl := filepath.Join(capi.Dir(c.cfg.BinDir, c.cfg.CAPI), "bin", "clusterctl")
	if st, err := os.Stat(clusterctl); err != nil || st.Mode()&0o111 == 0 {
		return mv, fmt.Errorf("capi lab: clusterctl %s not found at %s: run `%s`", c.cfg.CAPI, clusterctl, capi.MakeTarget)
	}
	kc, err := c.WorkloadKubeconfig(ctx)
	if err != nil {
		return mv, err
	}
	dir := filepath.Join(c.mgmt.Dir(), "capi-self-managed")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return mv, fmt.Errorf("capi lab: %w", err)
	}
	mv.Workloads = filepath.Join(dir, "workload.kubeconfig")
	if err := os.WriteFile(mv.Workloads, kc, 0o600); err != nil {
		return mv, fmt.Errorf("capi lab: %w", err)
	}
	rc, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return mv, fmt.Errorf("capi lab: the workload kubeconfig: %w", err)
	}
	rc.WarningHandler = rest.NoWarnings{}
	node, ip, err := c.readyWorker(ctx, rc)
	if err != nil {
		return mv, err
	}
	mv.Node = node
	u, err := url.Parse(rc.Host)
	if err != nil {
		return mv, fmt.Errorf("capi lab: the workload endpoint %q: %w", rc.Host, err)
	}
	start := time.Now()
	in, err := capi.StartInCluster(ctx, c.mgmt, capi.InClusterOptions{Version: c.cfg.CAPI, BinDir: c.cfg.BinDir,
		Config: rc, Node: node, NodeIP: ip, Endpoint: u.Host, Log: c.cfg.Log})
	if err != nil {
		return mv, err
	}
	wdyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return mv, fmt.Errorf("capi lab: client for the workload cluster: %w", err)
	}
	if err := infra.InstallCRDs(ctx, wdyn); err != nil {
		return mv, fmt.Errorf("capi lab: the lab provider's CRDs in the workload cluster: %w", err)
	}
	if c.cfg.ProviderInCluster {
		if err := c.startCloud(); err != nil {
			return mv, err
		}
	}
	mv.Install = time.Since(start)

	// The provider's controller stops watching the management lab before anything is moved:
	// clusterctl deletes the source objects once their copies exist, and a controller that saw
	// its LabCluster go would close the balancer, the workload cluster's endpoint. Its Cloud
	// is the Lab's: the balancers and hosts stay.
	c.ctrl.Handover(wdyn)
	c.cancel()
	c.cancel = nil
	if err := <-c.done; err != nil && !errors.Is(err, context.Canceled) {
		return mv, fmt.Errorf("capi lab: the provider's controller: %w", err)
	}
	start = time.Now()
	mv.Log = filepath.Join(dir, "clusterctl-move.log")
	moveErr := c.clusterctlMove(ctx, clusterctl, mv.Workloads, mv.Log, dir)
	mv.Move = time.Since(start)
	if moveErr != nil || !c.cfg.ProviderInCluster {
		// It goes on here, from the workload cluster (Handover).
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c.cancel = cancel
		go func() { c.done <- c.ctrl.Run(rctx) }()
	}
	if moveErr != nil {
		return mv, moveErr
	}
	if c.cfg.ProviderInCluster {
		start = time.Now()
		cs, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return mv, fmt.Errorf("capi lab: client for the workload cluster: %w", err)
		}
		if err := c.deployProvider(ctx, cs, node, u.Host); err != nil {
			return mv, err
		}
		mv.Install += time.Since(start)
		mv.Provider = "pod on " + node
	} else {
		mv.Provider = "lab process"
	}
	// The management lab's managers stop, as a bootstrap cluster is deleted after the move.
	if err := c.managers.Stop(ctx); err != nil {
		return mv, err
	}
	c.dyn, c.inCluster = wdyn, in // Move runs alone: no other call of c's is in progress
	ms, err := c.machines().List(ctx, metav1.ListOptions{})
	if err == nil {
		mv.Objects = len(ms.Items)
	}
	fmt.Fprintf(c.cfg.Log, "capi lab: %s moved into itself (managers on %s; install %s, clusterctl move %s)\n",
		c.cfg.Cluster.Name, node, mv.Install.Round(time.Second), mv.Move.Round(time.Second))
	return mv, nil
}

// clusterctlMove runs `clusterctl move` from the management lab to the workload cluster with
// its configuration and cache kept in dir, and no version check: it would call GitHub.
func (c *Lab) clusterctlMove(ctx context.Context, clusterctl, to, logFile, dir string) error {
	mctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	out, err := os.Create(logFile)
	if err != nil {
		return fmt.Errorf("capi lab: %w", err)
	}
	defer func() { _ = out.Close() }()
	cmd := exec.CommandContext(mctx, clusterctl, "move", "--kubeconfig", c.mgmt.AdminKubeconfig(),
		"--to-kubeconfig", to, "--namespace", namespace(c.cfg.Cluster), "-v", "2")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = []string{"HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "CLUSTERCTL_DISABLE_VERSIONCHECK=true", "PATH=/usr/bin:/bin"}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("capi lab: clusterctl move: %w; last lines of %s:\n%s", err, logFile, proc.Tail(logFile, 15))
	}
	return nil
}

// readyWorker waits until a worker Machine of the cluster has a Node that is Ready, and
// returns the node's name and its host's address.
func (c *Lab) readyWorker(ctx context.Context, rc *rest.Config) (string, net.IP, error) {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return "", nil, fmt.Errorf("capi lab: client for the workload cluster: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	last := "no worker Machine yet"
	for {
		if name := c.workerNode(wctx); name != "" {
			n, err := cs.CoreV1().Nodes().Get(wctx, name, metav1.GetOptions{})
			switch {
			case err != nil:
				last = err.Error()
			case !nodeReady(n):
				last = "node " + name + " is not Ready"
			default:
				if h, ok := c.pool.Get(name); ok {
					return name, net.IP(h.IP().AsSlice()), nil
				}
				last = "no host for node " + name
			}
		}
		select {
		case <-wctx.Done():
			return "", nil, fmt.Errorf("capi lab: no Ready worker: %w (%s)", wctx.Err(), last)
		case <-time.After(2 * time.Second):
		}
	}
}

// workerNode is the node of the first worker Machine (by name) that has one.
func (c *Lab) workerNode(ctx context.Context) string {
	ms, err := c.machines().List(ctx, metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/deployment-name=" + c.cfg.Cluster.WorkersName()})
	if err != nil {
		return ""
	}
	sort.Slice(ms.Items, func(i, j int) bool { return ms.Items[i].GetName() < ms.Items[j].GetName() })
	for _, m := range ms.Items {
		if n, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name"); n != "" {
			return n
		}
	}
	return ""
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// coreManagerLogs are the core manager's log files: its process's, and after Move its Pods'
// container logs on the worker (one per container run, oldest first).
func (c *Lab) coreManagerLogs() []string {
	var out []string
	if logs := c.managers.LogFiles(); len(logs) > 0 {
		out = append(out, logs[0])
	}
	if c.inCluster == nil {
		return out
	}
	return append(out, c.ManagerPodLogs(capi.CoreManager)...)
}

// ManagerPodLogs are the container logs of manager's Pods (one of capi.ManagerNames) on the
// hosts Move installed them on, oldest run first; none before Move.
func (c *Lab) ManagerPodLogs(manager string) []string {
	if c.inCluster == nil {
		return nil
	}
	h, ok := c.pool.Get(c.inCluster.Node)
	if !ok {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(h.Node().PodLogsDir(), c.inCluster.PodLogGlob(manager)))
	sort.Strings(files)
	return files
}
