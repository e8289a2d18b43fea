// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command provider is the lab infrastructure provider's controller as a Pod runs it in the
// cluster it manages (package pkg/lab/capi/infra/provider): client-go's in-cluster
// configuration, the lab's cloud API (package pkg/lab/capi/infra/cloud) at --cloud-url with the
// token and CA mounted from a Secret, leader election on a Lease in its namespace. It exits 1
// when it loses its Lease, as a controller-runtime manager does. Built static into an image by
// pkg/lab/image.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/lab/capi/infra/cloud"
	"github.com/credwatch/credwatch/pkg/lab/capi/infra/provider"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "provider:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	// With hostNetwork, $HOSTNAME is the node's: the Pod's name comes from the downward API.
	c := provider.Config{Pod: os.Getenv("POD_NAME"), LeaseNamespace: os.Getenv("POD_NAMESPACE")}
	var url, tokenFile, caFile string
	fs := flag.NewFlagSet("provider", flag.ContinueOnError)
	fs.StringVar(&c.Namespace, "namespace", "", "watch the LabClusters and LabMachines of this namespace only (default all)")
	fs.StringVar(&url, "cloud-url", "", "the lab's cloud API (required)")
	fs.StringVar(&tokenFile, "cloud-token-file", "/etc/lab-cloud/token", "the cloud API's bearer token")
	fs.StringVar(&caFile, "cloud-ca-file", "/etc/lab-cloud/ca.crt", "the CA of an https cloud API's certificate")
	if err := fs.Parse(args); err != nil {
		return err
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return fmt.Errorf("the cloud token: %w", err)
	}
	var ca []byte
	if strings.HasPrefix(url, "https://") {
		if ca, err = os.ReadFile(caFile); err != nil {
			return fmt.Errorf("the cloud CA: %w", err)
		}
	}
	cl, err := cloud.NewClient(cloud.ClientOptions{URL: url, Token: strings.TrimSpace(string(token)), CA: ca})
	if err != nil {
		return err
	}
	rc, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	// The controller reads Machines and Clusters in v1beta1, deprecated in Cluster API v1.14:
	// a warning on every call would bury the log.
	rc.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return provider.Run(ctx, c, provider.Clients{Dynamic: dyn, Kube: cs}, cl, os.Stdout) // lost Lease: exit 1, restarted
}
