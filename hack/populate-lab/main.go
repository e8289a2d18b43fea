// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command populate-lab fills a cluster (usually a lab) with the inventory `credwatch check` is
// budgeted against: pods with projected tokens, service accounts, and legacy secret-based token
// Secrets, some of them mounted and some marked used or invalid. Objects go into namespaces
// credwatch-pop-N; nothing runs (there are no nodes), the pods stay Pending.
//
//	go run ./hack/populate-lab --lab-dir DIR [--pods 10000 --serviceaccounts 3000 --legacy-secrets 5000]
//	go run ./hack/populate-lab --lab-dir DIR --print-endpoints   # --endpoint flags for credwatch check
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/credwatch/credwatch/pkg/lab"
)

type options struct {
	labDir, kubeconfig                   string
	pods, sas, secrets, namespaces, jobs int
	printEndpoints                       bool
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
	fs.IntVar(&o.namespaces, "namespaces", 20, "namespaces to spread them over")
	fs.IntVar(&o.jobs, "jobs", 24, "concurrent requests")
	fs.BoolVar(&o.printEndpoints, "print-endpoints", false, "print --endpoint=URL for every lab member and exit")
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
	return populate(context.Background(), cs, o)
}

func ns(i, n int) string { return fmt.Sprintf("credwatch-pop-%d", i%n) }

func populate(ctx context.Context, cs kubernetes.Interface, o options) error {
	start := time.Now()
	for i := range o.namespaces {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns(i, o.namespaces)}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace: %w", err)
		}
	}
	// Service account i lives in namespace i % namespaces.
	if err := parallel(o.jobs, o.sas, "serviceaccounts", func(i int) error {
		_, err := cs.CoreV1().ServiceAccounts(ns(i, o.namespaces)).Create(ctx,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sa-%d", i)}}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	// Secret i belongs to service account i % sas (same namespace); every 10th is marked used,
	// every 50th marked invalid.
	if err := parallel(o.jobs, o.secrets, "legacy token secrets", func(i int) error {
		sa := i % o.sas
		labels := map[string]string{}
		if i%10 == 0 {
			labels["kubernetes.io/legacy-token-last-used"] = time.Now().UTC().Format("2006-01-02")
		}
		if i%50 == 0 {
			labels["kubernetes.io/legacy-token-invalid-since"] = time.Now().UTC().Format("2006-01-02")
		}
		_, err := cs.CoreV1().Secrets(ns(sa, o.namespaces)).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("legacy-token-%d", i), Labels: labels,
				Annotations: map[string]string{corev1.ServiceAccountNameKey: fmt.Sprintf("sa-%d", sa)}},
			Type: corev1.SecretTypeServiceAccountToken}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	// Pod i runs as service account i % sas; every 20th mounts a legacy token secret of its SA;
	// every 7th adds a projected token for another audience.
	exp := int64(7200)
	if err := parallel(o.jobs, o.pods, "pods", func(i int) error {
		sa := i % o.sas
		spec := corev1.PodSpec{ServiceAccountName: fmt.Sprintf("sa-%d", sa),
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}
		if i%20 == 0 && sa < o.secrets {
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "legacy", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: fmt.Sprintf("legacy-token-%d", sa)}}})
		}
		if i%7 == 0 {
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "vault", VolumeSource: corev1.VolumeSource{
				Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
					Audience: "vault", ExpirationSeconds: &exp, Path: "token"}}}}}})
		}
		_, err := cs.CoreV1().Pods(ns(sa, o.namespaces)).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i)}, Spec: spec}, metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "populated %d pods, %d service accounts, %d legacy token secrets in %s\n",
		o.pods, o.sas, o.secrets, time.Since(start).Round(time.Second))
	return nil
}

// parallel runs fn(0..n-1) on jobs workers; AlreadyExists counts as done, so reruns are cheap.
func parallel(jobs, n int, what string, fn func(i int) error) error {
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil && !apierrors.IsAlreadyExists(err) {
					once.Do(func() { firstErr = fmt.Errorf("create %s #%d: %w", what, i, err) })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
