// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package lab runs a real Kubernetes cluster on this machine from binaries built from the Go
// module proxy (hack/labbin): an etcd cluster, N kube-apiservers (stacked: each talks to "its
// own" etcd member), a TCP load balancer in front of them (LBMode: only ready members, or all of
// them, like the seed incident's ELB), optionally kube-controller-manager, and with Options.Nodes
// a kube-scheduler and real worker nodes (package node: containerd, kubelet, kube-proxy) whose
// pods reach the API through the kubernetes Service.
//
// By default every member and node is a network host of its own (package hostnet: one network
// namespace per host on a bridge, 10.200.X.0/24), found through the default/kubernetes
// EndpointSlice as in a cluster; NetworkLoopback keeps the members on 127.0.0.x for tests that
// need no nodes. Options.Cloud runs the controllers and kubelets with a cloud provider (package
// cloudlab supplies vCenter's simulator or Keystone); package scenario reproduces the field
// reports on a running lab, package supervisor keeps one alive for `credwatch lab up`.
//
// The control plane's pieces are small packages Lab composes: controlplane/pki (CA, keys,
// kubeconfigs), controlplane/etcd (members and membership), controlplane/apiserver (a member's
// flags and /readyz) and controlplane/lb (the balancer and its health check); Lab decides where
// each runs and in which order a roll changes them.
//
// Every process is a child of the calling process (package proc: own process group, killed on
// parent death), so nothing outlives the lab. Up starts everything; Down stops apiservers, the
// controllers, the nodes, then etcd, and removes the namespaces, mounts and iptables rules it
// made. Membership changes (AddMember, RemoveMember, Roll) mirror a KubeadmControlPlane rolling
// upgrade; RemoveOptions.KeepAPIServer removes a member's etcd member but leaves its apiserver
// running, the scale-down window of the first field report.
package lab
