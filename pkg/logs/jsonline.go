package logs

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/logs/internal/quoted"
)

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

// parseJSONLine reads a JSON line. It returns the inner line to unwrap further (Docker's "log"),
// or done when r is complete.
// The inner line of a Docker line may be in sc (quoted.Scratch); c, if not nil, reads its time.
func parseJSONLine(line string, r *Record, sc *quoted.Scratch, c *minuteClock) (inner string, t time.Time, done bool) {
	if strings.HasPrefix(line, `{"log":"`) {
		// Docker json-file, the commonest JSON line: read it without reflection.
		raw := line[len(`{"log":"`):]
		v, rest, complete := sc.Body(raw)
		if complete {
			r.addFormat("docker")
			if ts, ok := quoted.JSONField(rest, "time"); ok {
				t, _ = c.rfc3339(ts)
			}
			return v, t, false
		}
	}
	var off [len(flatKeys)]int
	if audit, log := scanJSONKeys(line, &off); !audit && !log {
		return parseFlatJSON(line, &off, r, sc)
	}
	var j jsonLine
	if err := json.Unmarshal([]byte(line), &j); err != nil {
		return parseJSONFragment(line, r)
	}
	switch {
	case j.Log != nil:
		r.addFormat("docker")
		t, _ = time.Parse(time.RFC3339Nano, j.Time)
		return *j.Log, t, false
	case j.Kind == "Event" && strings.HasPrefix(j.APIVersion, "audit.k8s.io/"):
		r.addFormat("audit")
		r.Component = "apiserver"
		t, _ = time.Parse(time.RFC3339Nano, j.StageTimestamp)
		a := &AuditInfo{User: j.User.Username, UserAgent: j.UserAgent, SourceIPs: j.SourceIPs, Verb: j.Verb,
			URI: j.RequestURI, AuditID: j.AuditID}
		if j.ResponseStatus != nil {
			a.Code = j.ResponseStatus.Code
			r.Msg = j.ResponseStatus.Message
		}
		r.Audit = a
		r.Time = t
		return "", t, true
	}
	r.addFormat("json")
	r.Msg = firstNonEmpty(j.Msg, j.Message)
	r.Err = firstNonEmpty(j.Err, j.Error)
	r.Severity = j.Level
	r.Source = j.Caller
	if h := firstNonEmpty(j.Host, j.Hostname); h != "" && r.Host == "" {
		r.Host = shortHost(h)
	}
	t = jsonTime(string(j.Ts))
	if t.IsZero() && j.Time != "" {
		t, _ = time.Parse(time.RFC3339Nano, j.Time)
	}
	r.Time = t
	return "", t, true
}

// jsonTime reads klog's float seconds ("ts":1700000000.123) and zap's RFC 3339 string.
func jsonTime(raw string) time.Time {
	if len(raw) == 0 {
		return time.Time{}
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t
			}
		}
		return time.Time{}
	}
	if t, ok := decimalTime(raw); ok {
		return t
	}
	return floatTime(raw)
}

// floatTime reads klog's "ts", seconds since the epoch as a JSON number, to the microsecond.
func floatTime(raw string) time.Time {
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || f <= 0 || f > 1e11 {
		return time.Time{}
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000) // klog writes microseconds
}

// decimalTime is floatTime for the plain decimals klog writes (1795939200.484123: seconds
// before 2038, a point and at most 6 digits), read without a float: ok is false for any other
// number, which floatTime reads (below 2^31 seconds a float64 holds the microseconds exactly
// enough to round to them; FuzzDecimalTime compares the two).
func decimalTime(raw string) (time.Time, bool) {
	sec, i := int64(0), 0
	for ; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
		sec = sec*10 + int64(raw[i]-'0')
	}
	if i == 0 || i > 10 || sec >= 1<<31 {
		return time.Time{}, false
	}
	us, digits := int64(0), 0
	if i < len(raw) && raw[i] == '.' {
		for i++; i < len(raw) && raw[i] >= '0' && raw[i] <= '9'; i++ {
			us = us*10 + int64(raw[i]-'0')
			digits++
		}
		if digits == 0 || digits > 6 {
			return time.Time{}, false
		}
	}
	if i != len(raw) || sec == 0 && us == 0 {
		return time.Time{}, false
	}
	for ; digits < 6; digits++ {
		us *= 10
	}
	return time.Unix(sec, us*1000), true
}

// parseJSONFragment salvages a JSON line that does not decode (cut off): it takes the string
// values of "log", "msg" and "err" as far as they go.
func parseJSONFragment(line string, r *Record) (inner string, t time.Time, done bool) {
	r.Truncated = true
	if v, ok := quoted.JSONField(line, "log"); ok {
		r.addFormat("docker")
		if ts, ok := quoted.JSONField(line, "time"); ok {
			t, _ = time.Parse(time.RFC3339Nano, ts)
		}
		return v, t, false
	}
	if strings.Contains(line, `"audit.k8s.io/`) {
		r.addFormat("audit")
		r.Component = "apiserver"
		a := &AuditInfo{}
		if strings.Contains(line, `"code":401`) {
			a.Code = 401
		}
		a.UserAgent, _ = quoted.JSONField(line, "userAgent")
		a.AuditID, _ = quoted.JSONField(line, "auditID")
		r.Audit = a
		return "", t, true
	}
	r.addFormat("json")
	r.Msg, _ = quoted.JSONField(line, "msg")
	r.Err, _ = quoted.JSONField(line, "err")
	if r.Msg == "" && r.Err == "" {
		r.Msg = line
	}
	return "", t, true
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// parseFlatJSON reads a klog or zap JSON line (flat string fields) without reflection.
// flatKeys are the fields parseFlatJSON reads, found in one pass.
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

// off holds the offsets of flatKeys (scanJSONKeys).
func parseFlatJSON(line string, off *[len(flatKeys)]int, r *Record, sc *quoted.Scratch) (inner string, t time.Time, done bool) {
	end := len(line) // strings.TrimRight(line, " \r") without building its set
	for end > 0 && (line[end-1] == ' ' || line[end-1] == '\r') {
		end--
	}
	if end == 0 || line[end-1] != '}' {
		return parseJSONFragment(line, r)
	}
	r.addFormat("json")
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
	if r.Msg == "" && r.Err == "" {
		r.Msg = line // a JSON logger with other field names: its text is still evidence
	}
	r.Severity = get(keyLevel)
	r.Source = get(keyCaller)
	if h := get(keyHost, keyHostname); h != "" && r.Host == "" {
		r.Host = shortHost(h)
	}
	if i := off[keyTs]; i >= 0 {
		v := line[i+5:]
		end := strings.IndexAny(v, ",}")
		if end > 0 {
			t = jsonTime(strings.TrimSpace(v[:end]))
		}
	}
	if t.IsZero() {
		if ts := get(keyTime); ts != "" {
			t, _ = time.Parse(time.RFC3339Nano, ts)
		}
	}
	r.Time = t
	return "", t, true
}
