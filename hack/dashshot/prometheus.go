// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// series is one series of a range query's matrix result: its labels and its samples in time order,
// without the NaN and infinite ones (Grafana draws those as gaps too).
type series struct {
	Labels  map[string]string
	Samples []sample
}

type sample struct {
	T time.Time
	V float64
}

// rangeQuery is one /api/v1/query_range request.
type rangeQuery struct {
	Expr       string
	Start, End time.Time
	Step       time.Duration
}

// prometheus queries one Prometheus server's HTTP API, and nothing else: no proxy, no redirect
// to another host.
type prometheus struct {
	base   *url.URL
	client *http.Client
}

func newPrometheus(rawURL string, timeout time.Duration) (*prometheus, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse's error quotes the whole URL, a password in it too: keep only why.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("--prometheus: not a URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--prometheus %s: want http(s)://HOST[:PORT][/PATH]", u.Redacted())
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	return &prometheus{base: u, client: &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("prometheus answered with a redirect: give its final URL")
		},
	}}, nil
}

// queryRange runs q and returns its matrix.
func (p *prometheus) queryRange(ctx context.Context, q rangeQuery) ([]series, error) {
	u := p.base.JoinPath("api/v1/query_range")
	form := url.Values{
		"query": {q.Expr},
		"start": {formatUnix(q.Start)},
		"end":   {formatUnix(q.End)},
		"step":  {strconv.FormatFloat(q.Step.Seconds(), 'f', -1, 64)},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("query_range request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("query_range: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("query_range: read answer: %w", err)
	}
	return parseQueryRange(resp.StatusCode, body)
}

// parseQueryRange decodes a query_range answer; a Prometheus error becomes an error with its type
// and message.
func parseQueryRange(status int, body []byte) ([]series, error) {
	var r struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query_range: HTTP %d, not a Prometheus API answer: %w", status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query_range: HTTP %d: %s: %s", status, r.ErrorType, r.Error)
	}
	if r.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("query_range: result type %q, want matrix", r.Data.ResultType)
	}
	out := make([]series, 0, len(r.Data.Result))
	for _, res := range r.Data.Result {
		s := series{Labels: res.Metric}
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		for _, v := range res.Values {
			ts, ok := v[0].(float64)
			str, ok2 := v[1].(string)
			if !ok || !ok2 {
				return nil, fmt.Errorf("query_range: malformed sample %v", v)
			}
			f, err := strconv.ParseFloat(str, 64)
			if err != nil {
				return nil, fmt.Errorf("query_range: sample value %q: %w", str, err)
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				continue
			}
			s.Samples = append(s.Samples, sample{T: unixTime(ts), V: f})
		}
		out = append(out, s)
	}
	return out, nil
}

func formatUnix(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', -1, 64)
}

func unixTime(sec float64) time.Time {
	return time.UnixMilli(int64(math.Round(sec * 1000))).UTC()
}
