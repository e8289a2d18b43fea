// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Keys and values kube-apiserver writes for KEP-4193 (service-account token JTI), as of v1.36.3:
//
//   - IssuedKey: the audit annotation TokenREST.Create adds when it mints a token
//     (kubernetes/kubernetes pkg/registry/core/serviceaccount/storage/token.go, TokenREST.Create,
//     audit.AddAuditAnnotation after the status is set; constant in
//     k8s.io/apiserver@kubernetes-1.36.3 pkg/authentication/serviceaccount/util.go:38);
//   - CredentialIDKey: the user.extra key a token's authenticator sets on every request the token
//     authenticates (k8s.io/apiserver@kubernetes-1.36.3 pkg/authentication/user/user.go:87);
//   - JTIPrefix: the value is "JTI=" + the token's jti (k8s.io/apiserver@kubernetes-1.36.3
//     pkg/authentication/token/jwt/jwt.go:21-26, CredentialIDForJTI). Client certificates carry
//     "X509SHA256=<hex>" in the same key (pkg/authentication/request/x509/x509.go:286) and are
//     never "issued" in an audit log.
//
// The ServiceAccountTokenJTI gate that guards the annotation is GA and locked on since 1.32.
const (
	IssuedKey       = "authentication.kubernetes.io/issued-credential-id"
	CredentialIDKey = "authentication.kubernetes.io/credential-id"
	JTIPrefix       = "JTI="
	podNameKey      = "authentication.kubernetes.io/pod-name"
	nodeNameKey     = "authentication.kubernetes.io/node-name"
)

// Event is what the tracer reads of one audit.k8s.io/v1 Event (k8s.io/apiserver@kubernetes-1.36.3
// pkg/apis/audit/v1/types.go:71-146). The request and response objects are read only for a
// TokenRequest, and only its spec and status.expirationTimestamp: status.token is never decoded,
// so the token a RequestResponse-level event carries never reaches a result.
type Event struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Level      string `json:"level"`
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string              `json:"username"`
		Extra    map[string][]string `json:"extra"`
	} `json:"user"`
	SourceIPs      []string   `json:"sourceIPs"`
	UserAgent      string     `json:"userAgent"`
	ObjectRef      *ObjectRef `json:"objectRef"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
	RequestObject  *tokenRequest     `json:"requestObject"`
	ResponseObject *tokenRequest     `json:"responseObject"`
	StageTimestamp time.Time         `json:"stageTimestamp"`
	Annotations    map[string]string `json:"annotations"`
}

// ObjectRef is the object a request is for.
type ObjectRef struct {
	Resource    string `json:"resource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

// tokenRequest is the part of an authentication.k8s.io/v1 TokenRequest the tracer keeps. It has
// no field for status.token on purpose.
type tokenRequest struct {
	Kind string `json:"kind"`
	Spec struct {
		Audiences         []string     `json:"audiences"`
		ExpirationSeconds *int64       `json:"expirationSeconds"`
		BoundObjectRef    *BoundObject `json:"boundObjectRef"`
	} `json:"spec"`
	Status struct {
		ExpirationTimestamp *time.Time `json:"expirationTimestamp"`
	} `json:"status"`
}

// BoundObject is a TokenRequest's spec.boundObjectRef: the Pod, Secret or Node the token dies with.
type BoundObject struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	UID  string `json:"uid,omitempty"`
}

// envelope is what tells an audit event from another JSON line.
type envelope struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
}

// ParseLine reads one line of an audit log: an Event, or an EventList (the batch an audit
// webhook receives, as some collectors store it) with its events in order.
func ParseLine(line []byte) ([]Event, error) {
	ev, err := ParseEvent(line)
	if err == nil {
		return []Event{ev}, nil
	}
	var list struct {
		envelope
		Items []Event `json:"items"`
	}
	if !bytes.Contains(line, []byte(`"EventList"`)) || json.Unmarshal(line, &list) != nil ||
		list.Kind != "EventList" || !strings.HasPrefix(list.APIVersion, "audit.k8s.io/") {
		return nil, err
	}
	return list.Items, nil
}

// ErrNotAudit is the error ParseEvent wraps for a line that is not an audit event.
var ErrNotAudit = errors.New("not an audit event")

// ParseEvent reads one line of an audit log: one event, as --audit-log-path writes them with
// --audit-log-format=json (the default).
func ParseEvent(line []byte) (Event, error) {
	var ev Event
	err := json.Unmarshal(line, &ev)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return Event{}, fmt.Errorf("%w: %s", ErrNotAudit, jsonProblem(err))
	}
	if ev.Kind != "Event" || !strings.HasPrefix(ev.APIVersion, "audit.k8s.io/") {
		// A line of another kind, or one whose kind could not be read before a field failed.
		var env envelope
		if json.Unmarshal(line, &env) != nil || env.Kind != "Event" || !strings.HasPrefix(env.APIVersion, "audit.k8s.io/") {
			return Event{}, fmt.Errorf("%w: kind %q, apiVersion %q (want Event, audit.k8s.io/v1)", ErrNotAudit, cut(env.Kind), cut(env.APIVersion))
		}
	}
	if err != nil {
		return Event{}, fmt.Errorf("audit event: %s", jsonProblem(err))
	}
	return ev, nil
}

// jsonProblem says what is wrong with a JSON line without quoting it.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %s: want %s", te.Field, te.Type)
	}
	var pe *time.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("a time that is not RFC 3339 (%s)", cut(pe.Value))
	}
	return "invalid JSON"
}

// cut keeps a value read from input short, for a message.
func cut(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Code is the response code, 0 when the event has none.
func (ev *Event) Code() int {
	if ev.ResponseStatus == nil {
		return 0
	}
	return ev.ResponseStatus.Code
}

// Final reports whether the event is the one of its request the tracer counts: the stage the
// response was complete at (or a panic). RequestReceived and ResponseStarted events of the same
// request would count it again; an event with no stage is counted. A request refused by
// authentication is the exception: kube-apiserver writes it at ResponseStarted alone (the failed
// handler's response writer, k8s.io/apiserver pkg/endpoints/filters/authn_audit.go at v0.30.14
// and v0.36.3, runs outside WithAudit, which writes ResponseComplete), so that event, which names
// no user, is its final one. An authenticated long-running request (a watch) that is answered 401
// has a ResponseStarted event too, with its user, and is counted at its ResponseComplete.
func (ev *Event) Final() bool {
	switch ev.Stage {
	case "", "ResponseComplete", "Panic":
		return true
	case "ResponseStarted":
		return ev.Code() == http.StatusUnauthorized && ev.User.Username == ""
	}
	return false
}

// Issued is the credential id the event records as minted, "" for none.
func (ev *Event) Issued() string {
	return ev.Annotations[IssuedKey]
}

// CredentialIDs are the ids of the credentials that authenticated the request.
func (ev *Event) CredentialIDs() []string {
	return ev.User.Extra[CredentialIDKey]
}

// Client is the request's client address (the first source IP) and user agent.
func (ev *Event) Client() Client {
	c := Client{UserAgent: ev.UserAgent}
	if len(ev.SourceIPs) > 0 {
		c.IP = ev.SourceIPs[0]
	}
	return c
}

// Client is a request's first source IP and user agent, which identify a client loosely: a
// rejected request has no user and no credential id, so this is all that ties it to one.
type Client struct {
	IP        string `json:"ip,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
}

// NormalizeID turns what an operator pastes into the credential id an audit log records: a
// bare jti becomes "JTI=<jti>"; "JTI=…" and other "KIND=…" ids (X509SHA256=…) are kept.
func NormalizeID(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", errors.New("empty credential id")
	case len(s) > 512:
		return "", fmt.Errorf("credential id of %d bytes: want a jti or JTI=<jti>", len(s))
	case strings.Count(s, ".") >= 2 && strings.HasPrefix(s, "eyJ"):
		return "", errors.New("that is a token, not its credential id: run credwatch token inspect on it and pass the JTI=… it prints")
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == '"' || r == '\\' {
			return "", fmt.Errorf("credential id %q: no spaces, quotes or control characters", cut(s))
		}
	}
	if i := strings.IndexByte(s, '='); i > 0 && isKind(s[:i]) {
		if i == len(s)-1 {
			return "", fmt.Errorf("credential id %q: nothing after %s", s, s[:i+1])
		}
		return s, nil
	}
	return JTIPrefix + s, nil
}

// isKind is the kind before '=' of a credential id: upper-case letters and digits (JTI, X509SHA256).
func isKind(k string) bool {
	for _, r := range k {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
