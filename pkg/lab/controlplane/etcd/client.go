// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package etcd

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Client speaks the three calls of etcd's v3 Cluster service the lab needs (member add, list and
// remove) as JSON through the gRPC gateway every etcd serves on its client URL
// (POST /v3/cluster/member/...). The lab is the only user of etcd in the tool; going through the
// gateway keeps etcd's gRPC client, and gRPC with it, out of the credwatch binary.
type Client struct {
	endpoints []string // client URLs, tried in order until one answers
	client    *http.Client
}

// APIMember is etcdserverpb.Member in the gateway's JSON (uint64 fields are strings).
type APIMember struct {
	ID       uint64   `json:"ID,string"`
	Name     string   `json:"name"`
	PeerURLs []string `json:"peerURLs"`
}

// AddResponse is etcdserverpb.MemberAddResponse: the new member and the resulting members.
type AddResponse struct {
	Member  APIMember   `json:"member"`
	Members []APIMember `json:"members"`
}

// NewClient is a client of the members at endpoints (client URLs, tried in order).
func NewClient(endpoints []string) *Client {
	return &Client{endpoints: endpoints, client: &http.Client{Timeout: 30 * time.Second}}
}

// NewTLSClient is a client of members that serve https with client certificates (a kubeadm
// control plane's etcd), each call bounded by timeout.
func NewTLSClient(endpoints []string, conf *tls.Config, timeout time.Duration) *Client {
	return &Client{endpoints: endpoints, client: &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: conf}}}
}

// MemberAdd adds a voting member with the peer URLs and returns etcd's answer.
func (a *Client) MemberAdd(ctx context.Context, peerURLs []string) (*AddResponse, error) {
	var resp AddResponse
	if err := a.call(ctx, "/v3/cluster/member/add", map[string][]string{"peerURLs": peerURLs}, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// MemberList returns the members of the cluster.
func (a *Client) MemberList(ctx context.Context) ([]APIMember, error) {
	var resp struct {
		Members []APIMember `json:"members"`
	}
	if err := a.call(ctx, "/v3/cluster/member/list", struct{}{}, &resp); err != nil {
		return nil, err
	}
	return resp.Members, nil
}

// MemberRemove removes the member with id.
func (a *Client) MemberRemove(ctx context.Context, id uint64) error {
	req := struct {
		ID uint64 `json:"ID,string"`
	}{id}
	return a.call(ctx, "/v3/cluster/member/remove", req, &struct{}{})
}

// Error is the gateway's error body: the gRPC status code and etcd's message, e.g.
// "etcdserver: unhealthy cluster".
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// call POSTs req to path on the first endpoint that answers and decodes the reply into resp.
// Like etcd's client it moves to the next endpoint only when one cannot be reached; an error etcd
// returns (an *Error) is final.
func (a *Client) call(ctx context.Context, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("encode %s request: %w", path, err)
	}
	if len(a.endpoints) == 0 {
		return errors.New("no etcd endpoint")
	}
	var errs []error
	for _, ep := range a.endpoints {
		err := a.post(ctx, ep+path, body, resp)
		var ee *Error
		if err == nil || errors.As(err, &ee) || ctx.Err() != nil {
			return err
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (a *Client) post(ctx context.Context, url string, body []byte, resp any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	r, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer r.Body.Close()
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("read reply of %s: %w", url, err)
	}
	if r.StatusCode != http.StatusOK {
		ee := &Error{}
		if json.Unmarshal(data, ee) != nil || ee.Message == "" {
			ee.Message = fmt.Sprintf("HTTP %d from %s: %.200s", r.StatusCode, url, data)
		}
		return ee
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return fmt.Errorf("decode reply of %s: %w", url, err)
	}
	return nil
}
