// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/credwatch/credwatch/pkg/report"
)

// Source is one member's audit log: the member named as the report names it, the input's name
// for messages, and how to open it (plain or gzip, told by content).
type Source struct {
	Member string
	Name   string
	Open   func() (io.ReadCloser, error)
	// Optional: a source whose first line is not an audit event is skipped (said in its
	// problems) instead of failing the trace: a file found in a directory next to other logs.
	Optional bool
}

// MemberFile is a member and the path of an audit log it wrote.
type MemberFile struct {
	Member string
	Path   string
}

// Files turns (member, path) pairs into sources.
func Files(files []MemberFile) []Source {
	out := make([]Source, len(files))
	for i, f := range files {
		out[i] = Source{Member: f.Member, Name: f.Path, Open: func() (io.ReadCloser, error) { return os.Open(f.Path) }}
	}
	return out
}

// Limits bound what a trace holds, whatever the size of the logs.
type Limits struct {
	Issued  int // issued ids listed (list mode); beyond, only counted per member
	Clients int // clients whose 401s are counted; beyond, not counted
	MaxLine int // bytes of one line; longer lines are skipped and counted
}

// DefaultLimits hold a trace of any log in a few tens of MB.
var DefaultLimits = Limits{Issued: 100_000, Clients: 50_000, MaxLine: 16 << 20}

// Trace reads the audit logs of sources, one line at a time, and reports for each of ids (JTI=…
// or a bare jti, see NormalizeID) the member that recorded it as issued and the members where it
// was used; with no ids, every credential id each member recorded as issued. A line that is not
// an audit event is an error naming the input and line, except a last line cut short (a log
// being written), which is counted in the input's problems.
func Trace(ctx context.Context, sources []Source, ids []string) (*Report, error) {
	return TraceLimits(ctx, sources, ids, DefaultLimits)
}

// TraceLimits is Trace with other limits.
func TraceLimits(ctx context.Context, sources []Source, ids []string, lim Limits) (*Report, error) {
	t := &tracer{lim: lim, want: map[string]*Credential{}, rejected: map[rejectKey]*Rejection{}, issuedPer: map[string]int{}}
	for _, raw := range ids {
		id, err := NormalizeID(raw)
		if err != nil {
			return nil, err
		}
		if t.want[id] == nil {
			t.want[id] = &Credential{ID: id}
			t.order = append(t.order, id)
		}
	}
	t.rep = &Report{APIVersion: report.APIVersion, Kind: "CredentialTrace", Mode: ModeTrace}
	if len(t.want) == 0 {
		t.rep.Mode = ModeIssued
	}
	for _, s := range sources {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, err := t.read(ctx, s)
		if err != nil {
			return nil, err
		}
		t.rep.Inputs = append(t.rep.Inputs, st)
	}
	t.finish()
	return t.rep, nil
}

// Modes of a report.
const (
	ModeTrace  = "trace"  // the credential ids asked for
	ModeIssued = "issued" // every credential id recorded as issued
)

// Report is what `credwatch logs --trace-credential` prints.
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Mode       string `json:"mode"`
	// Inputs are the audit logs read, with their member.
	Inputs []Input `json:"inputs"`
	// Credentials are the ids traced (mode trace), in the order asked.
	Credentials []*Credential `json:"credentials,omitempty"`
	// Issued are the ids each member recorded as issued (mode issued), by member and time.
	Issued []Issue `json:"issued,omitempty"`
	// IssuedPerMember counts the issued ids per member (mode issued), listed or not.
	IssuedPerMember map[string]int `json:"issuedPerMember,omitempty"`
	// IssuedNotListed is how many issued ids were counted but not listed (Limits.Issued).
	IssuedNotListed int `json:"issuedNotListed,omitempty"`
	// ClientsNotTracked is how many clients' 401s were not counted (Limits.Clients).
	ClientsNotTracked int `json:"clientsNotTracked,omitempty"`
}

// Input is one audit log read.
type Input struct {
	Name   string `json:"name"`
	Member string `json:"member"`
	Lines  int64  `json:"lines"`
	// Read is false for an optional source that is not an audit log (Source.Optional).
	Read bool `json:"read"`
	// Levels counts the events per audit level (every stage): a policy that logs
	// serviceaccounts/token at Metadata records the issue but not the bound object (Request and
	// above).
	Levels   map[string]int64 `json:"levels,omitempty"`
	Problems []string         `json:"problems,omitempty"`
}

// Credential is what the logs say of one credential id.
type Credential struct {
	ID string `json:"id"`
	// Issued are the TokenRequests that minted it: one, normally; none when the member that
	// minted it is not among the inputs or its policy does not log the request.
	Issued []Issue `json:"issued"`
	// Used are the members that authenticated a request with it.
	Used []Use `json:"used"`
	// Rejected are 401s on a member, after the credential was issued (or first used), from a
	// client that used it: a correlation by source IP and user agent, not proof.
	Rejected []Rejection `json:"rejected,omitempty"`
	// Summary says it in one sentence.
	Summary string `json:"summary"`

	clients []Client // the clients that used it, at most maxClientsPerID
	start   time.Time
}

// maxClientsPerID bounds the clients remembered per traced id.
const maxClientsPerID = 16

// Issue is one TokenRequest a member's audit log recorded as minting a credential.
type Issue struct {
	Member string    `json:"member"`
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	// AuditID is the request's audit ID, to find the event again.
	AuditID        string `json:"auditID,omitempty"`
	Level          string `json:"level,omitempty"`
	ServiceAccount string `json:"serviceAccount"` // namespace/name
	// Requester is the user that asked for it: system:node:<node> for a kubelet, a controller, a
	// person running kubectl create token.
	Requester string `json:"requester,omitempty"`
	Client    Client `json:"client"`
	// BoundObject, Audiences and ExpirationSeconds come from the request object: only at audit
	// level Request or RequestResponse.
	BoundObject       *BoundObject `json:"boundObject,omitempty"`
	Audiences         []string     `json:"audiences,omitempty"`
	ExpirationSeconds *int64       `json:"expirationSeconds,omitempty"`
	// ExpiresAt comes from the response object's status.expirationTimestamp: only at
	// RequestResponse (whose status.token is never read).
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// Use is what one member's audit log says of the requests a credential authenticated.
type Use struct {
	Member string    `json:"member"`
	First  time.Time `json:"first"`
	Last   time.Time `json:"last"`
	Count  int64     `json:"count"`
	// Denied counts the requests authenticated but refused afterwards (403 and other errors
	// at or above 400): the credential was accepted.
	Denied int64  `json:"denied,omitempty"`
	User   string `json:"user,omitempty"`
	// Pod and Node are the user.extra the authenticator adds for a pod- or node-bound token.
	Pod  string `json:"pod,omitempty"`
	Node string `json:"node,omitempty"`
}

// Rejection counts one member's 401s from one client.
type Rejection struct {
	Member string    `json:"member"`
	Client Client    `json:"client"`
	First  time.Time `json:"first"`
	Last   time.Time `json:"last"`
	Count  int64     `json:"count"`
	// Message is the first 401's responseStatus message ("Authentication failed, attempted: bearer").
	Message string `json:"message,omitempty"`
}

type rejectKey struct {
	member string
	client Client
}

type tracer struct {
	lim       Limits
	rep       *Report
	want      map[string]*Credential
	order     []string
	rejected  map[rejectKey]*Rejection
	issuedPer map[string]int
}

// marker strings: a line with none of them is not decoded past the first of each input.
var (
	markIssued = []byte(IssuedKey)
	markUsed   = []byte(CredentialIDKey)
	mark401    = []byte(`"code":401`)
)

// read reads one source, line by line.
func (t *tracer) read(ctx context.Context, s Source) (Input, error) {
	in := Input{Name: s.Name, Member: s.Member, Levels: map[string]int64{}}
	rc, err := s.Open()
	if err != nil {
		return in, fmt.Errorf("%s: %w", s.Name, err)
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64<<10)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return in, fmt.Errorf("%s: gzip: %w", s.Name, err)
		}
		defer zr.Close()
		r = zr
	}
	lr := bufio.NewReaderSize(r, 256<<10)
	var long []byte
	first := true
	for n := int64(1); ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return in, ctx.Err()
		}
		line, err := lr.ReadSlice('\n')
		tooLong := false
		for errors.Is(err, bufio.ErrBufferFull) {
			if !tooLong && len(long)+len(line) <= t.lim.MaxLine {
				long = append(long, line...)
			} else {
				tooLong = true
			}
			line, err = lr.ReadSlice('\n')
		}
		if len(long) > 0 {
			line = append(long, line...)
			long = long[:0]
		}
		last := err != nil
		if err != nil && !errors.Is(err, io.EOF) {
			return in, fmt.Errorf("%s: line %d: %w", s.Name, n, err)
		}
		if len(line) == 0 && last {
			break
		}
		in.Lines = n
		if tooLong || len(line) > t.lim.MaxLine {
			in.Problems = append(in.Problems, fmt.Sprintf("line %d: longer than %d bytes: skipped", n, t.lim.MaxLine))
			if last {
				break
			}
			continue
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			if last {
				break
			}
			continue
		}
		cutShort := last && line[len(line)-1] != '\n'
		if trimmed[0] != '{' {
			if cutShort && !first {
				in.Problems = append(in.Problems, fmt.Sprintf("line %d: cut short (a log being written?): skipped", n))
				break
			}
			if first && s.Optional {
				return skipped(in, n, "not JSON"), nil
			}
			hint := "an audit log has one JSON event per line"
			if bytes.Contains(trimmed, []byte(" AUDIT: ")) {
				hint = "the legacy text format: start kube-apiserver with --audit-log-format=json"
			}
			return in, fmt.Errorf("%s: line %d: %w (%s)", s.Name, n, ErrNotAudit, hint)
		}
		if lv := levelOf(trimmed); lv != "" {
			in.Levels[lv]++
		}
		if cutShort && !first && trimmed[len(trimmed)-1] != '}' {
			in.Problems = append(in.Problems, fmt.Sprintf("line %d: cut short (a log being written?): skipped", n))
			break
		}
		if first || bytes.Contains(trimmed, markIssued) || bytes.Contains(trimmed, markUsed) || bytes.Contains(trimmed, mark401) {
			evs, err := ParseLine(trimmed)
			if err != nil {
				if cutShort && !first {
					in.Problems = append(in.Problems, fmt.Sprintf("line %d: cut short (a log being written?): skipped", n))
					break
				}
				if first && s.Optional && errors.Is(err, ErrNotAudit) {
					return skipped(in, n, "not an audit event"), nil
				}
				return in, fmt.Errorf("%s: line %d: %w", s.Name, n, err)
			}
			first = false
			for i := range evs {
				if evs[i].Final() {
					t.event(s.Member, &evs[i])
				}
			}
		}
		if last {
			break
		}
	}
	in.Read = true
	if first && len(in.Problems) == 0 {
		in.Problems = append(in.Problems, "no audit events")
	}
	return in, nil
}

// skipped is an optional input whose line n shows it is no audit log.
func skipped(in Input, n int64, why string) Input {
	in.Levels = nil
	in.Problems = append(in.Problems, fmt.Sprintf("line %d: %s: not an audit log, skipped", n, why))
	return in
}

// levelOf is the value of an event line's "level" field, found without decoding the line: the
// encoder kube-apiserver uses writes it before any object that could hold the same text.
func levelOf(line []byte) string {
	const key = `"level":"`
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return ""
	}
	v := line[i+len(key):]
	j := bytes.IndexByte(v, '"')
	if j <= 0 || j > 20 {
		return ""
	}
	switch lv := string(v[:j]); lv {
	case "None", "Metadata", "Request", "RequestResponse":
		return lv
	}
	return ""
}

// event takes one final event into the trace.
func (t *tracer) event(member string, ev *Event) {
	if id := ev.Issued(); id != "" {
		t.issued(member, id, ev)
	}
	if ids := ev.CredentialIDs(); len(ids) > 0 && t.rep.Mode == ModeTrace {
		for _, id := range ids {
			if c := t.want[id]; c != nil {
				c.use(member, ev)
			}
		}
	}
	if ev.Code() == 401 && t.rep.Mode == ModeTrace {
		t.reject(member, ev)
	}
}

func (t *tracer) issued(member, id string, ev *Event) {
	c := t.want[id]
	if c == nil && t.rep.Mode == ModeTrace {
		return
	}
	is := Issue{Member: member, ID: id, Time: ev.StageTimestamp.UTC(), AuditID: ev.AuditID, Level: ev.Level,
		Requester: ev.User.Username, Client: ev.Client()}
	if o := ev.ObjectRef; o != nil {
		is.ServiceAccount = o.Namespace + "/" + o.Name
	}
	for _, obj := range []*tokenRequest{ev.RequestObject, ev.ResponseObject} {
		if obj == nil {
			continue
		}
		if is.BoundObject == nil {
			is.BoundObject = obj.Spec.BoundObjectRef
		}
		if is.Audiences == nil {
			is.Audiences = obj.Spec.Audiences
		}
		if is.ExpirationSeconds == nil {
			is.ExpirationSeconds = obj.Spec.ExpirationSeconds
		}
		if e := obj.Status.ExpirationTimestamp; e != nil && is.ExpiresAt == nil {
			u := e.UTC()
			is.ExpiresAt = &u
		}
	}
	if c != nil {
		c.Issued = append(c.Issued, is)
		c.see(is.Time)
		return
	}
	t.issuedPer[member]++
	if len(t.rep.Issued) < t.lim.Issued {
		t.rep.Issued = append(t.rep.Issued, is)
	} else {
		t.rep.IssuedNotListed++
	}
}

// see moves the credential's start (issued or first used) to at when it is earlier.
func (c *Credential) see(at time.Time) {
	if !at.IsZero() && (c.start.IsZero() || at.Before(c.start)) {
		c.start = at
	}
}

func (c *Credential) use(member string, ev *Event) {
	at := ev.StageTimestamp.UTC()
	c.see(at)
	i := slices.IndexFunc(c.Used, func(u Use) bool { return u.Member == member })
	if i < 0 {
		c.Used = append(c.Used, Use{Member: member, First: at, Last: at, User: ev.User.Username})
		i = len(c.Used) - 1
	}
	u := &c.Used[i]
	u.Count++
	if code := ev.Code(); code >= 400 {
		u.Denied++
	}
	if at.Before(u.First) {
		u.First = at
	}
	if at.After(u.Last) {
		u.Last = at
	}
	if v := ev.User.Extra[podNameKey]; len(v) > 0 && u.Pod == "" {
		u.Pod = v[0]
	}
	if v := ev.User.Extra[nodeNameKey]; len(v) > 0 && u.Node == "" {
		u.Node = v[0]
	}
	if cl := ev.Client(); !slices.Contains(c.clients, cl) && len(c.clients) < maxClientsPerID {
		c.clients = append(c.clients, cl)
	}
}

func (t *tracer) reject(member string, ev *Event) {
	k := rejectKey{member, ev.Client()}
	at := ev.StageTimestamp.UTC()
	r := t.rejected[k]
	if r == nil {
		if len(t.rejected) >= t.lim.Clients {
			t.rep.ClientsNotTracked++
			return
		}
		r = &Rejection{Member: member, Client: k.client, First: at, Last: at}
		if ev.ResponseStatus != nil {
			r.Message = cut(ev.ResponseStatus.Message)
		}
		t.rejected[k] = r
	}
	r.Count++
	if at.Before(r.First) {
		r.First = at
	}
	if at.After(r.Last) {
		r.Last = at
	}
}

// finish orders the report and writes the summaries.
func (t *tracer) finish() {
	rep := t.rep
	if rep.Mode == ModeIssued {
		sort.SliceStable(rep.Issued, func(i, j int) bool {
			a, b := rep.Issued[i], rep.Issued[j]
			if a.Member != b.Member {
				return a.Member < b.Member
			}
			return a.Time.Before(b.Time)
		})
		rep.IssuedPerMember = t.issuedPer
		return
	}
	for _, id := range t.order {
		c := t.want[id]
		sort.SliceStable(c.Used, func(i, j int) bool { return c.Used[i].Member < c.Used[j].Member })
		for _, r := range t.rejected {
			if slices.Contains(c.clients, r.Client) && !c.start.IsZero() && !r.Last.Before(c.start) {
				c.Rejected = append(c.Rejected, *r)
			}
		}
		sort.Slice(c.Rejected, func(i, j int) bool {
			a, b := c.Rejected[i], c.Rejected[j]
			if a.Member != b.Member {
				return a.Member < b.Member
			}
			return a.First.Before(b.First)
		})
		if c.Issued == nil {
			c.Issued = []Issue{}
		}
		if c.Used == nil {
			c.Used = []Use{}
		}
		c.Summary = summary(c)
		rep.Credentials = append(rep.Credentials, c)
	}
}

// summary says in one sentence where a credential came from and where it went.
func summary(c *Credential) string {
	var b strings.Builder
	switch len(c.Issued) {
	case 0:
		b.WriteString("no audit log read records it as issued (the member that minted it is not among the inputs, its audit policy does not log create on serviceaccounts/token at Metadata or above, or it is not a TokenRequest token)")
	default:
		members := make([]string, 0, len(c.Issued))
		for _, is := range c.Issued {
			if !slices.Contains(members, is.Member) {
				members = append(members, is.Member)
			}
		}
		is := c.Issued[0]
		fmt.Fprintf(&b, "issued by %s at %s for %s", strings.Join(members, ", "), is.Time.Format(time.RFC3339), orDash(is.ServiceAccount))
		if o := is.BoundObject; o != nil {
			fmt.Fprintf(&b, ", bound to %s %s", strings.ToLower(o.Kind), o.Name)
		}
		if len(members) > 1 {
			b.WriteString(" (recorded by more than one member: the same jti minted twice, or logs of one member under two names)")
		}
	}
	if len(c.Used) == 0 {
		b.WriteString("; no request authenticated with it in the logs read")
	} else {
		ms := make([]string, len(c.Used))
		for i, u := range c.Used {
			ms[i] = u.Member
		}
		fmt.Fprintf(&b, "; accepted by %s", strings.Join(ms, ", "))
	}
	var rej []string
	for _, r := range c.Rejected {
		if !slices.Contains(rej, r.Member) {
			rej = append(rej, r.Member)
		}
	}
	if len(rej) > 0 {
		fmt.Fprintf(&b, "; its clients were refused (401) by %s after it was issued: a member that does not trust the key it was signed with? (credwatch check)", strings.Join(rej, ", "))
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" || s == "/" {
		return "-"
	}
	return s
}
