// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/credwatch/credwatch/pkg/cmdline"
)

// Process is a process on this host that reads a cloud config with --cloud-config: a kubelet,
// or a control-plane component that systemd runs (kubespray, the in-tree era) rather than a Pod.
type Process struct {
	PID     int       `json:"pid"`
	Kind    string    `json:"kind"`
	Node    string    `json:"node,omitempty"`
	Started time.Time `json:"started"`
	// CloudProvider and CloudConfig are its --cloud-provider and --cloud-config flags; File is
	// CloudConfig as this process sees it, a path under its /proc/PID/root.
	CloudProvider string `json:"cloudProvider,omitempty"`
	CloudConfig   string `json:"cloudConfig"`
	File          string `json:"-"`
}

// ProcessReader lists the host's cloud-config readers; Discover calls it again while it waits
// for a crash-looping kubelet to start.
type ProcessReader func() ([]Process, error)

// HostProcesses reads the processes under procRoot (normally /proc) whose command line names a
// --cloud-config. Processes that exit while being read are skipped.
func HostProcesses(procRoot string) ProcessReader {
	return func() ([]Process, error) {
		fs, err := procfs.NewFS(procRoot)
		if err != nil {
			return nil, fmt.Errorf("read host processes: %w", err)
		}
		procs, err := fs.AllProcs()
		if err != nil {
			return nil, fmt.Errorf("read host processes under %s: %w", procRoot, err)
		}
		self, _ := os.Readlink(filepath.Join(procRoot, "self", "ns", "uts"))
		host, _ := os.Hostname()
		var out []Process
		for _, p := range procs {
			argv, err := p.CmdLine()
			if err != nil || len(argv) == 0 {
				continue
			}
			pr, ok := processOf(argv)
			if !ok {
				continue
			}
			st, err := p.Stat()
			if err != nil {
				continue
			}
			start, err := st.StartTime()
			if err != nil {
				continue
			}
			pr.PID = p.PID
			pr.Started = time.Unix(0, int64(start*float64(time.Second))).UTC().Truncate(10 * time.Millisecond)
			pr.File = filepath.Join(procRoot, strconv.Itoa(p.PID), "root", pr.CloudConfig)
			if pr.Node == "" && pr.Kind == Kubelet {
				// A kubelet without --hostname-override is named after its host: ours, when it
				// shares our UTS namespace.
				if uts, _ := os.Readlink(filepath.Join(procRoot, strconv.Itoa(p.PID), "ns", "uts")); uts != "" && uts == self {
					pr.Node = host
				}
			}
			out = append(out, pr)
		}
		return out, nil
	}
}

// processOf reads a command line: the kind of component it is and its cloud flags; ok is false
// for anything that is not a known component with a --cloud-config.
func processOf(argv []string) (Process, bool) {
	flags := cmdline.Parse(argv)
	p := Process{CloudConfig: flags.Last("cloud-config"), CloudProvider: flags.Last("cloud-provider"), Node: flags.Last("hostname-override")}
	if p.CloudConfig == "" {
		return Process{}, false
	}
	switch name := path.Base(argv[0]); {
	case name == Kubelet:
		p.Kind = Kubelet
	case strings.Contains(name, "cloud-controller-manager"):
		p.Kind = CloudControllerManager
	case name == KubeControllerManager:
		p.Kind = KubeControllerManager
	case name == KubeAPIServer:
		p.Kind = KubeAPIServer
	default:
		return Process{}, false
	}
	if p.Kind != Kubelet {
		p.Node = ""
	}
	return p, true
}

// reads says whether p reads the local config file at path: the same file seen through the
// process's root (its own mount namespace), else the same path.
func (p Process) reads(file string) bool {
	a, errA := os.Stat(p.File)
	b, errB := os.Stat(file)
	if errA == nil && errB == nil {
		return os.SameFile(a, b)
	}
	return filepath.Clean(p.CloudConfig) == filepath.Clean(file)
}

// consumer is p as a consumer of the file it reads.
func (p Process) consumer() Consumer {
	t := p.Started
	c := Consumer{Component: p.Kind, Node: p.Node, PID: p.PID, Started: &t,
		How: fmt.Sprintf("host process (pid %d) with --cloud-config %s, parsed once at start-up", p.PID, p.CloudConfig)}
	switch p.Kind {
	case Kubelet:
		c.Restart = "systemctl restart kubelet"
		if p.Node != "" {
			c.Restart += "   # on node " + p.Node
		}
	default:
		c.Restart = "systemctl restart " + p.Kind
	}
	return c
}
