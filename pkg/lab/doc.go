// Package lab runs a real multi-member Kubernetes control plane on loopback addresses: an etcd
// cluster, N kube-apiservers (stacked: each talks to "its own" etcd member), an in-process TCP load
// balancer in front of them and, optionally, a real kube-controller-manager.
//
// Every process is a child of the calling process (own process group, SIGKILL on parent death), so
// nothing outlives the lab. Up starts everything; Down stops apiservers, then the controller manager,
// then etcd (SIGTERM, SIGKILL after a bounded wait). Membership changes (AddMember, RemoveMember,
// Roll) mirror a KubeadmControlPlane rolling upgrade.
package lab
