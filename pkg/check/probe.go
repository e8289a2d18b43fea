// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/credwatch/credwatch/pkg/limits"
)

// ErrNoAnswer is wrapped by Probe's error when the cluster endpoint gave no HTTP answer at all.
var ErrNoAnswer = errors.New("no answer")

// Probe asks the cluster endpoint for /version once, within c.Timeout, before Fetch spends a
// timeout on each of its calls: a cluster that does not answer at all costs one timeout, not
// one per call. Any HTTP answer from an API server, a refusal (401, 403) included, passes; no
// answer, a response that is too large or one no API server sends fails, naming the endpoint.
func Probe(ctx context.Context, c Config) error {
	if err := c.defaults(); err != nil {
		return err
	}
	cfg := rest.CopyConfig(c.REST)
	cfg.Timeout = c.Timeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client for %s: %w", cfg.Host, err)
	}
	pctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	_, err = dc.RESTClient().Get().AbsPath("/version").Do(pctx).Raw()
	var st apierrors.APIStatus
	if err == nil || errors.As(err, &st) {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	target := strings.TrimRight(cfg.Host, "/") + "/version"
	if clean := limits.Clean(err); clean != err {
		return clean
	}
	// The client's Timeout and the context's deadline are the same duration: either may fire
	// first (on a loaded machine the client's often does), and both mean no answer in time.
	var ue *url.Error
	if pctx.Err() != nil || errors.As(err, &ue) && ue.Timeout() {
		return fmt.Errorf("GET %s: %w within %s", target, ErrNoAnswer, c.Timeout)
	}
	if ue != nil {
		err = ue.Err
	}
	return fmt.Errorf("GET %s: %w (%w)", target, ErrNoAnswer, err)
}
