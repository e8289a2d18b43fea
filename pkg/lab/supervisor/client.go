// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"github.com/credwatch/credwatch/pkg/lab"
)

// Client talks to a lab's supervisor over its unix socket.
type Client struct {
	Dir  string
	http *http.Client
}

// Error is an error the supervisor answered with.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Message }

// NewClient returns a client for the supervisor of the lab in dir.
func NewClient(dir string) *Client {
	sock := SocketPath(dir)
	return &Client{Dir: dir, http: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}}
}

// Do sends a request to path ("/v1/...") with body encoded as JSON (nil = none) and decodes the
// answer into out (nil = discard). Hosted services are reached under /v1/services/{name}/.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://lab"+path, rd)
	if err != nil {
		return fmt.Errorf("lab supervisor request: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("lab supervisor in %s is not reachable: %w", c.Dir, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read lab supervisor answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		var e apiError
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(data))
		}
		return &Error{Status: resp.StatusCode, Message: e.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode lab supervisor answer: %w", err)
	}
	return nil
}

// Status returns the supervisor's state; probe also checks every member's health.
func (c *Client) Status(ctx context.Context, probe bool) (State, error) {
	var st State
	err := c.Do(ctx, http.MethodGet, "/v1/status?probe="+strconv.FormatBool(probe), nil, &st)
	return st, err
}

// Down stops the lab and waits until everything has stopped.
func (c *Client) Down(ctx context.Context) (State, error) {
	var st State
	err := c.Do(ctx, http.MethodPost, "/v1/down", nil, &st)
	return st, err
}

// AddMember adds a member.
func (c *Client) AddMember(ctx context.Context, o lab.MemberOptions) (lab.Member, error) {
	var m lab.Member
	err := c.Do(ctx, http.MethodPost, "/v1/members", o, &m)
	return m, err
}

// RemoveMember removes a member.
func (c *Client) RemoveMember(ctx context.Context, name string, o lab.RemoveOptions) error {
	q := url.Values{}
	q.Set("etcdFirst", strconv.FormatBool(o.EtcdFirst))
	q.Set("keepAPIServer", strconv.FormatBool(o.KeepAPIServer))
	return c.Do(ctx, http.MethodDelete, "/v1/members/"+url.PathEscape(name)+"?"+q.Encode(), nil, nil)
}

// Roll replaces every member.
func (c *Client) Roll(ctx context.Context, o lab.MemberOptions) ([]RollStep, error) {
	var steps []RollStep
	err := c.Do(ctx, http.MethodPost, "/v1/roll", o, &steps)
	return steps, err
}

// Partition cuts member off from what from names (iptables inside its host).
func (c *Client) Partition(ctx context.Context, member string, from lab.PartitionFrom) error {
	return c.Do(ctx, http.MethodPost, "/v1/members/"+url.PathEscape(member)+"/partition", map[string]lab.PartitionFrom{"from": from}, nil)
}

// Heal removes every partition of member.
func (c *Client) Heal(ctx context.Context, member string) error {
	return c.Do(ctx, http.MethodPost, "/v1/members/"+url.PathEscape(member)+"/heal", nil, nil)
}

// SetLBMode switches the load balancer's mode.
func (c *Client) SetLBMode(ctx context.Context, m lab.LBMode) error {
	return c.Do(ctx, http.MethodPut, "/v1/lbmode", map[string]lab.LBMode{"mode": m}, nil)
}

// ControllerManager starts ("start") or stops ("stop") the controller manager.
func (c *Client) ControllerManager(ctx context.Context, action string) error {
	return c.Do(ctx, http.MethodPost, "/v1/controller-manager/"+url.PathEscape(action), nil, nil)
}

// StartService starts a hosted service with config (encoded as JSON).
func (c *Client) StartService(ctx context.Context, name string, config any) error {
	return c.Do(ctx, http.MethodPost, "/v1/services/"+url.PathEscape(name), config, nil)
}
