// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package node runs one real Kubernetes worker node of the lab inside a network namespace the lab
// made: containerd (Debian's, with runc and the CNI reference plugins), a kubelet and kube-proxy in
// iptables mode, each with its own configuration, state and logs under the node's directory.
//
// The node lives in a private mount namespace of its own, held by a small holder process: the
// kubelet, containerd and kube-proxy all enter it (nsenter --target HOLDER --mount --net --uts;
// the holder's UTS namespace gives the node its name as hostname, as on a VM). Inside
// it, files holding the values the kubelet wants are bind-mounted over the host-wide sysctls it
// would otherwise change (vm.overcommit_memory, kernel.panic, ...), and directories of the node are
// bind-mounted over /run, /var/lib and /var/log, so the paths the kubelet and containerd write no
// matter how they are configured (/var/lib/kubelet/device-plugins/kubelet.sock, /var/log/containers,
// /var/lib/cni/results, /run/containerd/s) are per node: two nodes run on one machine, and nothing
// reaches the machine's own /run, /var/lib or /var/log. The mounts the kubelet and containerd make
// (projected-token tmpfs, overlay root filesystems, pod network namespaces) stay in that namespace
// and vanish with it when Stop has ended its last process. Containers are confined to the cgroup
// root Config.CgroupRoot, created in every cgroup v1 hierarchy before the kubelet starts and
// removed depth-first after Stop. Leftovers reports any process, mount, cgroup, host path or
// host sysctl the node left behind.
//
// With Config.Kubeadm the node is a kubeadm host instead (kubeadm.go), as a Cluster API machine
// image is: containerd runs, /etc is the node's own copy of the machine's, kubeadm, crictl, the
// kubelet and a systemctl shim are first on PATH, and a supervisor starts the kubelet once kubeadm
// has configured it. Command runs the bootstrap's `kubeadm init` or `kubeadm join` in the node.
package node
