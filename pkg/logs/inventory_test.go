// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package logs

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/logs/cause"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/messages.md from the message inventory")

// inventoryDir holds the message inventory, one file per emitter.
var inventoryDir = filepath.Join("testdata", "messages")

// messagesDoc is the page generated from the inventory.
var messagesDoc = filepath.Join("..", "..", "docs", "messages.md")

// emitterFile is one file of the message inventory: what one emitter's source formats on the
// credential path, read at its release tags.
type emitterFile struct {
	Emitter     string           `json:"emitter"`
	Family      string           `json:"family"`
	Repository  string           `json:"repository"`
	Frame       string           `json:"frame"`
	Logged      string           `json:"logged,omitempty"`
	KlogOnly    bool             `json:"klogOnly,omitempty"` // logs through klog (text, structured, JSON), never logfmt
	Tags        []string         `json:"tags"`
	Description string           `json:"description"`
	Messages    []inventoryEntry `json:"messages"`

	file string
}

// inventoryEntry is one message as its emitter formats it.
type inventoryEntry struct {
	Text    string   `json:"text"`              // as the source formats it, verbs kept
	Cause   string   `json:"cause"`             // catalogue ID it names, or unknown: it names none alone
	Logged  string   `json:"logged,omitempty"`  // how it reaches a log line (loggedError, loggedAuth, loggedLine)
	Frame   string   `json:"frame,omitempty"`   // the message logged with it as its error
	Err     string   `json:"err,omitempty"`     // for a logged line: an error logged beside it
	Example string   `json:"example,omitempty"` // the text with plausible values, when filling verbs is not enough
	Path    string   `json:"path"`              // source file at Tag
	Line    int      `json:"line"`              // line at Tag
	Tag     string   `json:"tag"`               // the newest tag read that has it
	Since   string   `json:"since"`             // the oldest tag read that has it
	Until   string   `json:"until,omitempty"`   // the newest tag read that has it, when not the newest read
	Absent  []string `json:"absent,omitempty"`  // tags read between since and until that lack it
	Note    string   `json:"note,omitempty"`
}

// How a message reaches a log line.
const (
	loggedError = "error" // an error value, logged under a frame message (err=, error=, "frame: err")
	loggedAuth  = "auth"  // a part of the API server's aggregate authentication error
	loggedLine  = "line"  // the log call's own message, maybe with an error beside it
)

func (e *emitterFile) logged(m inventoryEntry) string {
	return firstNonEmpty(m.Logged, e.Logged, loggedError)
}

func (e *emitterFile) frame(m inventoryEntry) string {
	return firstNonEmpty(m.Frame, e.Frame, "request failed")
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func loadInventory(t *testing.T) []emitterFile {
	t.Helper()
	inv, names := loadYAMLDir[emitterFile](t, inventoryDir)
	for i := range inv {
		inv[i].file = names[i]
	}
	return inv
}

// fillVerbs gives a message's format verbs plausible values.
func fillVerbs(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '%' || i+1 == len(text) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(text) && strings.IndexByte("+#-. 0123456789", text[j]) >= 0 {
			j++
		}
		if j == len(text) {
			b.WriteString(text[i:])
			break
		}
		switch text[j] {
		case '%':
			b.WriteByte('%')
		case 'q':
			b.WriteString(`"builder"`)
		case 'd':
			b.WriteString("2")
		case 'f':
			b.WriteString("15")
		case 'T':
			b.WriteString("*errors.errorString")
		default: // s, v, w
			b.WriteString("builder")
		}
		i = j
	}
	return b.String()
}

// sample is the message with values: the entry's example, else its text with verbs filled.
func (m inventoryEntry) sample() string {
	if m.Example != "" {
		return m.Example
	}
	return fillVerbs(m.Text)
}

// carrier is one envelope a message travels in to the operator.
type carrier struct {
	name string
	// wrap builds the log line from the line's message and error (either may be empty).
	wrap func(msg, err string) string
}

const klogPrefix = "E1204 16:20:00.123456       1 authentication.go:75] "

func klogStructured(msg, err string) string {
	s := klogPrefix + strconv.Quote(msg)
	if err != "" {
		s += " err=" + strconv.Quote(err)
	}
	return s
}

func joinMsgErr(msg, err string) string {
	switch {
	case err == "":
		return msg
	case msg == "":
		return err
	}
	return msg + ": " + err
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// logfmtValue quotes a value as logrus and slog text handlers do.
func logfmtValue(s string) string {
	if s != "" && !strings.ContainsAny(s, " =\"\\\n\t") {
		return s
	}
	return strconv.Quote(s)
}

var carriers = []carrier{
	{"klog-text", func(msg, err string) string { return klogPrefix + joinMsgErr(msg, err) }},
	{"klog-structured", klogStructured},
	{"json", func(msg, err string) string {
		s := `{"ts":1764865200.123,"caller":"auth/login.go:88","msg":` + jsonString(msg)
		if err != "" {
			s += `,"err":` + jsonString(err)
		}
		return s + "}"
	}},
	{"logfmt", func(msg, err string) string {
		s := `time="2026-12-04T16:20:00Z" level=error msg=` + logfmtValue(msg)
		if err != "" {
			s += " error=" + logfmtValue(err)
		}
		return s
	}},
	{"journald", func(msg, err string) string {
		return "Dec 04 16:20:00 node-1 kubelet[1234]: " + klogStructured(msg, err)
	}},
	{"cri", func(msg, err string) string {
		return "2026-12-04T16:20:00.123456789Z stderr F " + klogStructured(msg, err)
	}},
	{"relayed", func(msg, err string) string {
		return "2026-12-04T16:20:00.123Z [ERROR] relay: upstream answered: " + joinMsgErr(msg, err)
	}},
	{"bare", joinMsgErr},
}

// authFrame is the API server's authentication line, in both eras.
const authFrame = "Unable to authenticate the request"

// travels is the log lines one entry takes on its way: envelope name → line.
func (e *emitterFile) travels(m inventoryEntry) map[string]string {
	s := m.sample()
	out := map[string]string{}
	defer func() {
		if e.KlogOnly {
			delete(out, "logfmt")
		}
	}()
	switch e.logged(m) {
	case loggedAuth:
		agg := "[" + s + "]"
		bare := s
		if s != "invalid bearer token" {
			agg = "[invalid bearer token, " + s + "]"
			bare = "invalid bearer token, " + s
		}
		for _, env := range carriers {
			switch env.name {
			case "logfmt":
				continue // the API server logs through klog
			case "klog-text":
				out[env.name] = env.wrap(authFrame+" due to an error", agg)
			case "relayed":
				out[env.name] = env.wrap("lookup failed", agg) // Vault's TokenReview relay
			case "bare":
				out[env.name] = bare
			default:
				out[env.name] = env.wrap(authFrame, agg)
			}
		}
	case loggedLine:
		for _, env := range carriers {
			out[env.name] = env.wrap(s, m.Err)
		}
	default:
		for _, env := range carriers {
			if env.name == "bare" {
				out[env.name] = s
				continue
			}
			out[env.name] = env.wrap(e.frame(m), s)
		}
	}
	return out
}

// inventoryResult is how the classifier reads one entry in one envelope.
type inventoryResult struct {
	file, envelope, line, want, got string
}

func (r inventoryResult) pass() bool {
	if r.want == cause.Unknown {
		return r.got == "(none)" || r.got == cause.Unknown
	}
	return r.got == r.want
}

func classifyInventory(t *testing.T, inv []emitterFile) []inventoryResult {
	t.Helper()
	cl := cause.NewClassifier(catalogue.Default())
	ref := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	var out []inventoryResult
	for i := range inv {
		e := &inv[i]
		for _, m := range e.Messages {
			lines := e.travels(m)
			names := make([]string, 0, len(lines))
			for n := range lines {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				out = append(out, inventoryResult{e.file, n, lines[n], m.Cause, classifyLines(cl, lines[n], ref)})
			}
		}
	}
	return out
}

// classifyLines names the cause of text as credwatch logs reads it: a message with a newline in
// it (azidentity's, MSAL's, oauth2's) is several lines in an unstructured log, and the one that
// names a cause names the message's. It is "(none)" when no line is classified.
func classifyLines(cl *cause.Classifier, text string, ref time.Time) string {
	got := "(none)"
	for _, l := range strings.Split(text, "\n") {
		ev, ok := Classify(cl, parseRecord(l, lineHint{ref: ref}))
		switch {
		case !ok:
		case ev.Cause != cause.Unknown:
			return ev.Cause
		default:
			got = ev.Cause
		}
	}
	return got
}

// inventoryFloor is the share of message × envelope lines of the inventory that must name their
// cause: every one. A message added to the inventory comes with its rule.
const inventoryFloor = 1.0

// TestMessageInventory runs every message of the inventory (testdata/messages), drawn from the
// emitters' source, through the classifier in each envelope it travels in, and requires the
// cause the inventory maps it to.
func TestMessageInventory(t *testing.T) {
	t.Parallel()
	inv := loadInventory(t)
	cat := catalogue.Default()
	for _, e := range inv {
		if e.Emitter == "" || e.Family == "" || e.Repository == "" || len(e.Tags) == 0 || e.Description == "" {
			t.Errorf("%s: emitter, family, repository, tags and description are required", e.file)
		}
		for i, m := range e.Messages {
			if m.Text == "" || m.Cause == "" || m.Path == "" || m.Line == 0 || m.Tag == "" || m.Since == "" {
				t.Errorf("%s message %d: text, cause, path, line, tag and since are required", e.file, i+1)
			}
			if _, ok := cat.Get(m.Cause); !ok && m.Cause != cause.Unknown {
				t.Errorf("%s message %d: cause %q is not in the catalogue", e.file, i+1, m.Cause)
			}
			switch e.logged(m) {
			case loggedError, loggedAuth, loggedLine:
			default:
				t.Errorf("%s message %d: logged %q: want error, auth or line", e.file, i+1, e.logged(m))
			}
		}
	}
	res := classifyInventory(t, inv)
	pass := 0
	var misses []string
	for _, r := range res {
		if r.pass() {
			pass++
			continue
		}
		misses = append(misses, fmt.Sprintf("%s [%s]: got %s, want %s: %s", r.file, r.envelope, r.got, r.want, r.line))
	}
	t.Logf("message inventory: %d/%d message × envelope lines name their cause", pass, len(res))
	for _, m := range misses {
		t.Logf("miss: %s", m)
	}
	if float64(pass) < inventoryFloor*float64(len(res)) {
		t.Errorf("message inventory: %d/%d lines name their cause, below %.1f %%", pass, len(res), 100*inventoryFloor)
	}
}

// TestMessagesDoc keeps docs/messages.md what the inventory says (go test ./pkg/logs -run
// TestMessagesDoc -args -update rewrites it).
func TestMessagesDoc(t *testing.T) {
	inv := loadInventory(t)
	got := renderMessagesDoc(inv, classifyInventory(t, inv))
	if *updateDocs {
		if err := os.WriteFile(messagesDoc, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(messagesDoc)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("%s is not what the inventory says: run go test ./pkg/logs -run TestMessagesDoc -args -update", messagesDoc)
	}
}

// renderMessagesDoc is docs/messages.md.
func renderMessagesDoc(inv []emitterFile, res []inventoryResult) string {
	var b strings.Builder
	b.WriteString(`# Messages on the credential path, from source

<!-- Generated from pkg/logs/testdata/messages/*.yaml by TestMessagesDoc: edit the inventory, then
go test ./pkg/logs -run TestMessagesDoc -args -update. -->

What each component on the credential path writes when a credential fails, read from its source at
its release tags rather than gathered from reports, and the catalogue cause (` + "`credwatch explain ID`" + `)
each message names. The inventory is in **pkg/logs/testdata/messages/**, one file per emitter;
` + "`TestMessageInventory`" + ` runs every message, its format verbs filled with plausible values, through
` + "`credwatch logs`" + `' reader and classifier in every envelope it travels in and requires its cause.
The field corpus beside it (pkg/logs/testdata/field) holds lines as people reported them.

An entry records facts only: the message as the emitter formats it (verbs kept), the cause, the
source file and line at the newest tag read that has it, and the oldest (and, when it is gone,
newest) tag read that has it. Tags between are not all read: the tags each emitter was read at are
listed with it. ` + "`unknown`" + ` means the message names no cause by itself (credwatch must not invent one).

How a message reaches a log (` + "`logged`" + `): ` + "`error`" + ` — an error value a component logs under its
own message (` + "`msg=… err=…`" + `, ` + "`frame: error`" + `); ` + "`auth`" + ` — a part of the API server's aggregate
` + "`Unable to authenticate the request … [invalid bearer token, …]`" + `; ` + "`line`" + ` — the log call's own
message, maybe with an error beside it.

Envelopes tried: klog text and structured, JSON (zap, klog JSON), logfmt (logrus, slog; not for
emitters marked ` + "`klogOnly`" + `, the Kubernetes components, which log through klog), journald prefix,
CRI, relayed inside another logger's message, and the bare fragment.

`)
	byFile := map[string][2]int{}
	total, pass := 0, 0
	for _, r := range res {
		c := byFile[r.file]
		c[1]++
		total++
		if r.pass() {
			c[0]++
			pass++
		}
		byFile[r.file] = c
	}
	msgs := 0
	for _, e := range inv {
		msgs += len(e.Messages)
	}
	fmt.Fprintf(&b, "**%d messages from %d emitters; %d of %d message × envelope lines name their cause.**\n\n", msgs, len(inv), pass, total)

	families := map[string][]emitterFile{}
	var order []string
	for _, e := range inv {
		if _, ok := families[e.Family]; !ok {
			order = append(order, e.Family)
		}
		families[e.Family] = append(families[e.Family], e)
	}
	sort.Strings(order)
	b.WriteString("| family | emitter | messages | lines classified | file |\n|---|---|---|---|---|\n")
	for _, f := range order {
		for _, e := range families[f] {
			c := byFile[e.file]
			fmt.Fprintf(&b, "| %s | %s | %d | %d/%d | [%s](../pkg/logs/testdata/messages/%s) |\n", f, e.Emitter, len(e.Messages), c[0], c[1], e.file, e.file)
		}
	}
	for _, f := range order {
		fmt.Fprintf(&b, "\n## %s\n", f)
		for _, e := range families[f] {
			fmt.Fprintf(&b, "\n### %s\n\n%s\n\n<%s>, read at %s.\n\n", e.Emitter, e.Description, e.Repository, strings.Join(e.Tags, ", "))
			b.WriteString("| message | cause | logged | source (newest tag read) | since | until |\n|---|---|---|---|---|---|\n")
			for _, m := range e.Messages {
				fmt.Fprintf(&b, "| %s | `%s` | %s | %s:%d @ %s | %s | %s |\n", mdCode(m.Text), m.Cause, e.logged(m), m.Path, m.Line, m.Tag, m.Since, m.Until)
			}
		}
	}
	return b.String()
}

// mdCode is s as inline code in a table cell.
func mdCode(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.Contains(s, "`") {
		return "``" + s + "``"
	}
	return "`" + s + "`"
}

// TestMessageInventoryAnalyze runs every inventory line through Analyze, as `credwatch logs`
// reads a file: the scan gate, the workers' lazy klog bodies and memo, and aggregation must find
// the cause classifyInventory names. The lines of one cause are read as one file (Analyze's
// set-up dominates a one-line file); a file that comes short is read again line by line to name
// the misses.
func TestMessageInventoryAnalyze(t *testing.T) {
	t.Parallel()
	cfg := Config{Catalogue: catalogue.Default(), Workers: 1, Now: time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)}
	byCause := map[string][]inventoryResult{}
	for _, r := range classifyInventory(t, loadInventory(t)) {
		if r.pass() { // TestMessageInventory reports the others
			byCause[r.want] = append(byCause[r.want], r)
		}
	}
	analyze := func(text string) map[string]int {
		in := Input{Name: "inventory.log", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil }}
		rep, err := Analyze(context.Background(), cfg, []Input{in})
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]int{}
		for _, g := range rep.Failures {
			found[g.Cause] += g.Count
		}
		return found
	}
	for want, rs := range byCause {
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(r.line + "\n")
		}
		found := analyze(b.String())
		if want == cause.Unknown {
			delete(found, cause.Unknown)
			if len(found) == 0 {
				continue
			}
		} else if found[want] >= len(rs) {
			continue
		}
		for _, r := range rs {
			got := "(none)"
			for c := range analyze(r.line + "\n") {
				if got == "(none)" || got == cause.Unknown {
					got = c
				}
			}
			if res := (inventoryResult{want: r.want, got: got}); !res.pass() {
				t.Errorf("%s [%s]: Analyze found %s, want %s: %s", r.file, r.envelope, got, r.want, r.line)
			}
		}
	}
}
