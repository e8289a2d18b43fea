// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command populate-lab fills a cluster (usually a lab) with the inventory `credwatch check` is
// budgeted against: pods with projected tokens, service accounts, and legacy secret-based token
// Secrets, some of them mounted and some marked used or invalid. Objects go into namespaces
// credwatch-pop-N. With --nodes, Node objects with a Ready kubelet's status are created too and
// the pods are bound to them, round robin, with a running pod's status (nothing really runs);
// without, the pods stay Pending. Objects that exist already are skipped, so a lab grows by
// running it again with larger counts.
//
//	go run ./hack/populate-lab --lab-dir DIR [--pods 10000 --serviceaccounts 3000 --legacy-secrets 5000 --nodes 0]
//	go run ./hack/populate-lab --lab-dir DIR --print-endpoints   # --endpoint flags for credwatch check
//	go run ./hack/populate-lab --lab-dir DIR --print-requests    # requests the members have served
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/credwatch/credwatch/pkg/lab"
)

type options struct {
	labDir, kubeconfig                          string
	pods, sas, secrets, nodes, namespaces, jobs int
	printEndpoints, printRequests               bool
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "populate-lab:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("populate-lab", flag.ContinueOnError)
	fs.StringVar(&o.labDir, "lab-dir", "", "lab state directory (its admin kubeconfig and members)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig (default: the lab's admin kubeconfig)")
	fs.IntVar(&o.pods, "pods", 10000, "pods to create")
	fs.IntVar(&o.sas, "serviceaccounts", 3000, "service accounts to create")
	fs.IntVar(&o.secrets, "legacy-secrets", 5000, "kubernetes.io/service-account-token Secrets to create")
	fs.IntVar(&o.nodes, "nodes", 0, "Ready nodes to create and bind the pods to (0: the pods stay Pending)")
	fs.IntVar(&o.namespaces, "namespaces", 20, "namespaces to spread them over")
	fs.IntVar(&o.jobs, "jobs", 24, "concurrent requests")
	fs.BoolVar(&o.printEndpoints, "print-endpoints", false, "print --endpoint=URL for every lab member and exit")
	fs.BoolVar(&o.printRequests, "print-requests", false, "print the sum of apiserver_request_total over the lab's members and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.labDir != "" {
		st, err := lab.ReadState(o.labDir)
		if err != nil {
			return err
		}
		if o.printEndpoints {
			for _, m := range st.Members {
				fmt.Printf("--endpoint=%s\n", m.URL)
			}
			return nil
		}
		if o.kubeconfig == "" {
			o.kubeconfig = st.AdminKubeconfig
		}
		if o.printRequests {
			var urls []string
			for _, m := range st.Members {
				urls = append(urls, m.URL)
			}
			n, err := requestCount(context.Background(), o.kubeconfig, urls)
			if err != nil {
				return err
			}
			fmt.Println(n)
			return nil
		}
	}
	if o.kubeconfig == "" || o.namespaces < 1 || o.sas < o.namespaces {
		return fmt.Errorf("need --lab-dir or --kubeconfig, --namespaces >= 1 and --serviceaccounts >= --namespaces")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", o.kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return populate(context.Background(), cs, mc, o)
}
