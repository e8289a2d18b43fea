// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package limits

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// NotAPIError says that URL answered with something no Kubernetes API server sends: an HTML page
// (a login portal, a proxy's page) or JSON that is not an object. What is "HTML" or "JSON".
type NotAPIError struct {
	URL  string // scheme, host and path
	What string
	Size int64 // bytes of the body, up to notAPIRead
	More bool  // the body was longer than Size
}

func (e *NotAPIError) Error() string {
	size := fmt.Sprintf("%d bytes", e.Size)
	if e.More {
		size = "more than " + Size(e.Size)
	}
	return fmt.Sprintf("%s: not a Kubernetes API response (%s, %s)", e.URL, e.What, size)
}

// notAPIRead bounds how much of a body that is not an API response is read to say its size.
const notAPIRead = 1 << 20

// APIOnly returns rt failing every successful (2xx) response that cannot come from a Kubernetes
// API server with a *NotAPIError: a text/html body, or a JSON body that is not an object. client-go
// would otherwise decode it and report a Go type name ("struct { APIVersion string ... }") or
// a page of HTML.
func APIOnly(rt http.RoundTripper) http.RoundTripper { return &apiOnly{rt: rt} }

type apiOnly struct{ rt http.RoundTripper }

func (t *apiOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.StatusCode < 200 || resp.StatusCode > 299 || streamed(req) {
		return resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	what := ""
	switch ct {
	case "text/html", "application/xhtml+xml":
		what = "HTML"
	case "application/json":
		br := bufio.NewReader(resp.Body)
		if first := firstByte(br); first != 0 && first != '{' {
			what = "JSON"
		}
		resp.Body = readCloser{Reader: br, Closer: resp.Body}
	}
	if what == "" {
		return resp, nil
	}
	defer resp.Body.Close()
	n, _ := io.Copy(io.Discard, io.LimitReader(resp.Body, notAPIRead+1))
	u := *req.URL
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return nil, &NotAPIError{URL: u.String(), What: what, Size: min(n, notAPIRead), More: n > notAPIRead}
}

// WrappedRoundTripper lets client-go reach the inner transport (to cancel requests).
func (t *apiOnly) WrappedRoundTripper() http.RoundTripper { return t.rt }

// firstByte is the first byte of br that is not JSON white space, or 0 at the end (or after 4 KiB
// of white space), without consuming anything.
func firstByte(br *bufio.Reader) byte {
	for n := 1; n <= 4096; n *= 2 {
		b, err := br.Peek(n)
		if i := bytes.IndexFunc(b, func(r rune) bool { return r != ' ' && r != '\t' && r != '\r' && r != '\n' }); i >= 0 {
			return b[i]
		}
		if err != nil {
			return 0
		}
	}
	return 0
}

type readCloser struct {
	io.Reader
	io.Closer
}

// Clean keeps what the caller said of a *TooLargeError or *NotAPIError err wraps, and drops what
// client-go and net/http put between ("unexpected error when reading response body. Please
// retry. Original error: ", `Get "https://...": `), which repeats the URL or adds nothing. Any
// other err is returned as it is. The result still wraps the typed error (errors.As).
func Clean(err error) error {
	var inner error
	var tl *TooLargeError
	var na *NotAPIError
	switch {
	case errors.As(err, &tl):
		inner = tl
	case errors.As(err, &na):
		inner = na
	default:
		return err
	}
	msg := err.Error()
	i := strings.LastIndex(msg, inner.Error())
	if i < 0 {
		return inner
	}
	head := msg[:i]
	if j := strings.Index(head, "unexpected error when reading response body"); j >= 0 {
		head = head[:j]
	}
	return &cleaned{head: dropURLError(head), inner: inner}
}

// dropURLError drops a trailing `Get "https://...": `, net/http's *url.Error prefix, from head.
func dropURLError(head string) string {
	h, ok := strings.CutSuffix(head, `": `)
	if !ok {
		return head
	}
	q := strings.LastIndexByte(h, '"')
	if q < 1 || h[q-1] != ' ' {
		return head
	}
	verb := h[:q-1]
	if sp := strings.LastIndexByte(verb, ' '); sp >= 0 {
		verb = verb[sp+1:]
	}
	switch verb {
	case "Get", "Head", "Post", "Put", "Patch", "Delete", "Options":
		return h[:q-1-len(verb)]
	}
	return head
}

type cleaned struct {
	head  string
	inner error
}

func (c *cleaned) Error() string { return c.head + c.inner.Error() }
func (c *cleaned) Unwrap() error { return c.inner }
