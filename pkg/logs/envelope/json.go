// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package envelope

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/logs/internal/quoted"
)

// JSON is what one JSON log line says: Docker json-file (Format "docker": Inner is the line it
// wraps), klog or zap JSON (Format "json") or a Kubernetes audit event (Format "audit").
type JSON struct {
	Format string
	Inner  string // a Docker line's "log" value, unescaped (into the scratch space, if one is given)
	// Time is the line's own time. A Docker line read on the fast path leaves it zero and its
	// "time" value in TimeText, for the caller's clock.
	Time      time.Time
	TimeText  string
	Msg, Err  string
	Level     string
	Caller    string
	Host      string // "host" or "hostname", as written
	Logger    string
	Component string // "apiserver" for an audit event
	Audit     *AuditInfo
	Truncated bool // the line does not decode: what it holds was taken as far as it goes
}

// jsonLine is the union of the JSON line formats credwatch reads: Docker json-file ("log"),
// klog/zap JSON ("ts", "msg", "err"), and Kubernetes audit events.
type jsonLine struct {
	Log    *string `json:"log"`
	Stream string  `json:"stream"`
	Time   string  `json:"time"`

	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	AuditID    string `json:"auditID"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	SourceIPs      []string `json:"sourceIPs"`
	UserAgent      string   `json:"userAgent"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	StageTimestamp string `json:"stageTimestamp"`

	Ts       json.RawMessage `json:"ts"`
	Msg      string          `json:"msg"`
	Message  string          `json:"message"`
	Err      string          `json:"err"`
	Error    string          `json:"error"`
	Level    string          `json:"level"`
	Caller   string          `json:"caller"`
	Host     string          `json:"host"`
	Hostname string          `json:"hostname"`
}

// JSONLine reads a JSON line. Docker's "log" value may be unescaped into sc (nil: a new string).
func JSONLine(line string, sc *quoted.Scratch) JSON {
	if strings.HasPrefix(line, `{"log":"`) {
		// Docker json-file, the commonest JSON line: read it without reflection.
		raw := line[len(`{"log":"`):]
		v, rest, complete := sc.Body(raw)
		if complete {
			j := JSON{Format: "docker", Inner: v}
			j.TimeText, _ = quoted.JSONField(rest, "time")
			return j
		}
	}
	var off [len(flatKeys)]int
	if audit, log := scanJSONKeys(line, &off); !audit && !log {
		return flatJSON(line, &off, sc)
	}
	var j jsonLine
	if err := json.Unmarshal([]byte(line), &j); err != nil {
		return jsonFragment(line)
	}
	switch {
	case j.Log != nil:
		t, _ := time.Parse(time.RFC3339Nano, j.Time)
		return JSON{Format: "docker", Inner: *j.Log, Time: t}
	case j.Kind == "Event" && strings.HasPrefix(j.APIVersion, "audit.k8s.io/"):
		out := JSON{Format: "audit", Component: "apiserver"}
		out.Time, _ = time.Parse(time.RFC3339Nano, j.StageTimestamp)
		a := &AuditInfo{User: j.User.Username, UserAgent: j.UserAgent, SourceIPs: j.SourceIPs, Verb: j.Verb,
			URI: j.RequestURI, AuditID: j.AuditID}
		if j.ResponseStatus != nil {
			a.Code = j.ResponseStatus.Code
			out.Msg = j.ResponseStatus.Message
		}
		out.Audit = a
		return out
	}
	out := JSON{Format: "json", Msg: firstNonEmpty(j.Msg, j.Message), Err: firstNonEmpty(j.Err, j.Error),
		Level: j.Level, Caller: j.Caller, Host: firstNonEmpty(j.Host, j.Hostname)}
	out.Time = JSONTime(string(j.Ts))
	if out.Time.IsZero() && j.Time != "" {
		out.Time, _ = time.Parse(time.RFC3339Nano, j.Time)
	}
	return out
}

// jsonFragment salvages a JSON line that does not decode (cut off): it takes the string values
// of "log", "msg" and "err" as far as they go.
func jsonFragment(line string) JSON {
	if v, ok := quoted.JSONField(line, "log"); ok {
		j := JSON{Format: "docker", Inner: v, Truncated: true}
		if ts, ok := quoted.JSONField(line, "time"); ok {
			j.Time, _ = time.Parse(time.RFC3339Nano, ts)
		}
		return j
	}
	if strings.Contains(line, `"audit.k8s.io/`) {
		a := &AuditInfo{}
		if strings.Contains(line, `"code":401`) {
			a.Code = 401
		}
		a.UserAgent, _ = quoted.JSONField(line, "userAgent")
		a.AuditID, _ = quoted.JSONField(line, "auditID")
		return JSON{Format: "audit", Component: "apiserver", Audit: a, Truncated: true}
	}
	j := JSON{Format: "json", Truncated: true}
	j.Msg, _ = quoted.JSONField(line, "msg")
	j.Err, _ = quoted.JSONField(line, "err")
	if j.Msg == "" && j.Err == "" {
		j.Msg = line
	}
	return j
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// flatKeys are the fields flatJSON reads, found in one pass.
var flatKeys = [...]string{"msg", "message", "err", "error", "logger", "level", "caller", "host", "hostname", "ts", "time"}

const (
	keyMsg = iota
	keyMessage
	keyErr
	keyError
	keyLogger
	keyLevel
	keyCaller
	keyHost
	keyHostname
	keyTs
	keyTime
)

// flatJSON reads a klog or zap JSON line (flat string fields) without reflection; off holds
// the offsets of flatKeys (scanJSONKeys).
func flatJSON(line string, off *[len(flatKeys)]int, sc *quoted.Scratch) JSON {
	end := len(line) // strings.TrimRight(line, " \r") without building its set
	for end > 0 && (line[end-1] == ' ' || line[end-1] == '\r') {
		end--
	}
	if end == 0 || line[end-1] != '}' {
		return jsonFragment(line)
	}
	r := JSON{Format: "json"}
	get := func(keys ...int) string {
		for _, k := range keys {
			if v, ok := sc.ValueAt(line, flatKeys[k], off[k]); ok && v != "" {
				return v
			}
		}
		return ""
	}
	r.Msg = get(keyMsg, keyMessage)
	r.Err = get(keyErr, keyError)
	r.Logger = get(keyLogger)
	if r.Msg == "" && (r.Err == "" || strings.Contains(line, `"error_description"`)) {
		// A JSON logger with other field names, or an OAuth 2.0 error body
		// ({"error":"invalid_client","error_description":"AADSTS…"}) whose "error" is only
		// the code: the whole text is the evidence.
		r.Msg = line
	}
	r.Level = get(keyLevel)
	r.Caller = get(keyCaller)
	r.Host = get(keyHost, keyHostname)
	if i := off[keyTs]; i >= 0 {
		v := line[i+5:]
		end := strings.IndexAny(v, ",}")
		if end > 0 {
			r.Time = JSONTime(strings.TrimSpace(v[:end]))
		}
	}
	if r.Time.IsZero() {
		if ts := get(keyTime); ts != "" {
			r.Time, _ = time.Parse(time.RFC3339Nano, ts)
		}
	}
	return r
}
