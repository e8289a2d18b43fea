// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"errors"
	"fmt"
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/credwatch/credwatch/pkg/limits"
)

// InventoryRead is how check reads its big lists: pods, nodes, service accounts and legacy
// token Secrets.
type InventoryRead string

const (
	// ReadCache (the default) reads the pods and Secrets from the apiserver's watch cache in one
	// response each, the way informers do (resourceVersion=0), and the nodes with consistent pages
	// of 5000; every response is decoded one object at a time as it arrives. docs/check.md says
	// which read each check may rely on.
	ReadCache InventoryRead = ""
	// ReadPaged pages through each list with consistent reads, 500 objects a page, each page
	// decoded whole: how check read before issue 27, kept to compare the findings of both.
	ReadPaged InventoryRead = "paged"
)

// How a list was read, as Snapshot.Reads records it.
const (
	HowCache           = "watch cache"              // resourceVersion=0, one list
	HowLargePages      = "consistent pages of 5000" // streamed
	HowPaged           = "consistent pages of 500"  // decoded whole (ReadPaged, or the last fallback)
	HowCount           = "consistent count"         // one object and remainingItemCount
	resourceVersionAny = "0"                        // the watch cache, as it is
)

// Page sizes: pageSize is the consistent read of ReadPaged; largePage the consistent read of
// ReadCache (nodes, the kubelets' Starting Events, and the fallback of the cache reads).
const (
	pageSize  = 500
	largePage = 5000
)

// bigListTimeout (times Config.Timeout) bounds one list answered in one response (every pod from
// the cache), which may be large.
const bigListTimeout = 6

// lister reads one resource: list decodes a response whole (ReadPaged, and counting); stream
// returns the body of a list in the protobuf encoding, whose items unmarshal decodes one at a
// time.
type lister[T any] struct {
	what      string // for errors: "pods", "secrets of type ... (metadata only)"
	opts      metav1.ListOptions
	list      func(context.Context, metav1.ListOptions) ([]T, metav1.ListMeta, error)
	stream    func(context.Context, metav1.ListOptions) (io.ReadCloser, error)
	unmarshal func([]byte, *T) error
}

// readConsistent reads every object of l with consistent reads, keeping what keep returns for
// each: pages of largePage objects, streamed (ReadPaged: pages of pageSize, decoded whole, which
// is also the fallback when a stream fails for any reason but the caller's authorization, e.g. a
// proxy that answers JSON). It returns how l was read.
func readConsistent[T, O any](ctx context.Context, c *Config, l lister[T], keep func(*T) O) ([]O, string, error) {
	if c.Inventory != ReadPaged {
		out, err := streamedPages(ctx, c, l, keep)
		if err == nil || denied(err) {
			return out, HowLargePages, err
		}
	}
	out, err := paged(ctx, c, l, keep)
	return out, HowPaged, err
}

// readCached reads every object of l from the watch cache in one response, falling back to
// readConsistent when that fails for any reason but the caller's authorization.
func readCached[T, O any](ctx context.Context, c *Config, l lister[T], keep func(*T) O) ([]O, string, error) {
	if c.Inventory == ReadPaged {
		return readConsistent(ctx, c, l, keep)
	}
	out, err := cacheList(ctx, c, l, keep)
	if err == nil {
		return out, HowCache, nil
	}
	if denied(err) {
		return nil, "", err
	}
	return readConsistent(ctx, c, l, keep)
}

// denied is an error no other way of reading would avoid.
func denied(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || errors.Is(err, context.Canceled)
}

// cacheList reads l in one response from the watch cache: resourceVersion=0 lets any member
// answer from memory, without asking etcd, as informers' first list does. Servers ignore a
// limit on such reads, so none is asked for.
func cacheList[T, O any](ctx context.Context, c *Config, l lister[T], keep func(*T) O) ([]O, error) {
	opts := l.opts
	opts.ResourceVersion = resourceVersionAny
	ctx, cancel := context.WithTimeout(ctx, bigListTimeout*c.Timeout)
	defer cancel()
	out, _, err := streamed(ctx, l, opts, nil, keep)
	if err != nil {
		return nil, fmt.Errorf("list %s from the watch cache: %w", l.what, err)
	}
	return out, nil
}

// streamed reads one list response of l, decoding one object at a time as it arrives and
// appending what keep returns to out. The response is not bounded as a whole (limits.Streamed):
// only one object of it is held at a time, and decodeList bounds that.
func streamed[T, O any](ctx context.Context, l lister[T], opts metav1.ListOptions, out []O, keep func(*T) O) ([]O, metav1.ListMeta, error) {
	body, err := l.stream(limits.Streamed(ctx), opts)
	if err != nil {
		return nil, metav1.ListMeta{}, err
	}
	defer body.Close()
	lm, err := decodeList(body, func(b []byte) error {
		var obj T
		if err := l.unmarshal(b, &obj); err != nil {
			return err
		}
		out = append(out, keep(&obj))
		return nil
	})
	if err != nil {
		return nil, lm, err
	}
	return out, lm, nil
}

// streamedPages reads l with consistent reads of largePage objects a page, each streamed.
func streamedPages[T, O any](ctx context.Context, c *Config, l lister[T], keep func(*T) O) ([]O, error) {
	return pages(ctx, c, l, largePage, func(ctx context.Context, opts metav1.ListOptions, out []O) ([]O, metav1.ListMeta, error) {
		return streamed(ctx, l, opts, out, keep)
	})
}

// paged reads l with consistent reads of pageSize objects a page, each decoded whole.
func paged[T, O any](ctx context.Context, c *Config, l lister[T], keep func(*T) O) ([]O, error) {
	return pages(ctx, c, l, pageSize, func(ctx context.Context, opts metav1.ListOptions, out []O) ([]O, metav1.ListMeta, error) {
		items, lm, err := l.list(ctx, opts)
		for i := range items {
			out = append(out, keep(&items[i]))
		}
		return out, lm, err
	})
}

// pages reads l with consistent reads of size objects a page, each read by page (which appends
// to out) within c.Timeout.
func pages[T, O any](ctx context.Context, c *Config, l lister[T], size int64,
	page func(context.Context, metav1.ListOptions, []O) ([]O, metav1.ListMeta, error)) ([]O, error) {
	var out []O
	opts := l.opts
	opts.Limit = size
	for {
		ctx1, cancel := context.WithTimeout(ctx, c.Timeout)
		var lm metav1.ListMeta
		var err error
		out, lm, err = page(ctx1, opts, out)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", l.what, err)
		}
		if lm.Continue == "" {
			return out, nil
		}
		opts.Continue = lm.Continue
	}
}

// listed adapts a typed client's List to lister.list; parts takes the list apart.
func listed[T, L any](list func(context.Context, metav1.ListOptions) (L, error), parts func(L) ([]T, metav1.ListMeta)) func(context.Context, metav1.ListOptions) ([]T, metav1.ListMeta, error) {
	return func(ctx context.Context, o metav1.ListOptions) ([]T, metav1.ListMeta, error) {
		l, err := list(ctx, o)
		if err != nil {
			return nil, metav1.ListMeta{}, err
		}
		items, lm := parts(l)
		return items, lm, nil
	}
}
