// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// requestCount sums apiserver_request_total over the members at urls: the requests they have
// served since they started, whoever sent them. The difference across a run is that run's cost.
func requestCount(ctx context.Context, kubeconfig string, urls []string) (float64, error) {
	var total float64
	for _, u := range urls {
		cfg, err := clientcmd.BuildConfigFromFlags(u, kubeconfig)
		if err != nil {
			return 0, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
		}
		cfg.TLSClientConfig.ServerName = "kubernetes.default.svc"
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return 0, fmt.Errorf("client for %s: %w", u, err)
		}
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return 0, fmt.Errorf("metrics of %s: %w", u, err)
		}
		n, err := sumMetric(raw, "apiserver_request_total")
		if err != nil {
			return 0, fmt.Errorf("metrics of %s: %w", u, err)
		}
		total += n
	}
	return total, nil
}

// sumMetric adds up every sample of the counter name in a Prometheus text exposition.
func sumMetric(raw []byte, name string) (float64, error) {
	var total float64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("sample %q: %w", line, err)
		}
		total += v
	}
	return total, sc.Err()
}
