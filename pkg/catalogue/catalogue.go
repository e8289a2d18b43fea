// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package catalogue is credwatch's one list of causes and findings: stable IDs, severities,
// explanations, remedies, and the exact message spellings per Kubernetes line. Every command
// reads it; `credwatch explain ID` prints an entry.
package catalogue

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/credwatch/credwatch/pkg/kubever"
)

// catalogueJSON is catalogue.yaml, the catalogue as people edit it, as JSON, which the program
// reads: decoding it takes a fifth of the time of the YAML (every command pays it at start).
// TestEmbeddedJSON keeps the two equal (`go test ./pkg/catalogue -run TestEmbeddedJSON -args
// -update` rewrites the JSON).
//
//go:embed catalogue.json
var catalogueJSON []byte

// Severity orders findings. Its zero value is invalid.
type Severity string

// Severities, lowest first.
const (
	Info     Severity = "info"
	Warning  Severity = "warning"
	Error    Severity = "error"
	Critical Severity = "critical"
)

var severityRank = map[Severity]int{Info: 1, Warning: 2, Error: 3, Critical: 4}

// ParseSeverity reads a severity name.
func ParseSeverity(s string) (Severity, error) {
	sev := Severity(strings.ToLower(strings.TrimSpace(s)))
	if _, ok := severityRank[sev]; !ok {
		return "", fmt.Errorf("severity %q: want one of info, warning, error, critical", s)
	}
	return sev, nil
}

// None is the threshold no severity reaches (--fail-on none: report, never fail on findings).
// It is never a finding's severity: ParseSeverity refuses it, ParseThreshold reads it.
const None Severity = "none"

// ParseThreshold reads a --fail-on value: a severity, or none.
func ParseThreshold(s string) (Severity, error) {
	if t := Severity(strings.ToLower(strings.TrimSpace(s))); t == None {
		return None, nil
	}
	sev, err := ParseSeverity(s)
	if err != nil {
		return "", fmt.Errorf("severity %q: want one of info, warning, error, critical, none", s)
	}
	return sev, nil
}

// AtLeast reports whether s is as severe as t or more; nothing is at least None.
func (s Severity) AtLeast(t Severity) bool { return t != None && severityRank[s] >= severityRank[t] }

// Rank is 1 (info) to 4 (critical), 0 for an unknown severity.
func (s Severity) Rank() int { return severityRank[s] }

// Message is one spelling of a cause, valid for a range of Kubernetes lines.
type Message struct {
	Key   string `json:"key"`
	Text  string `json:"text"`
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
	// Where says which lines the text names the cause on: "auth" only inside an
	// authentication error (it is an authenticator's error), "any" on any line. Empty: "auth"
	// for the service-account authenticator's entries (Source under pkg/serviceaccount/), else "any".
	Where string `json:"where,omitempty"`
	// Yields marks a frame — a text ending in a verb that wraps an inner error — that names a
	// consequence, not a cause: a named cause it wraps names the line instead (the kubelet's
	// "failed to fetch token: %v" around a TokenRequest denial).
	Yields bool `json:"yields,omitempty"`
}

// Where values of a Message.
const (
	WhereAuth = "auth"
	WhereAny  = "any"
)

// Entry is one cause or finding.
type Entry struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Severity Severity  `json:"severity"`
	Title    string    `json:"title"`
	Meaning  string    `json:"meaning"`
	Arises   string    `json:"arises,omitempty"`
	Remedy   string    `json:"remedy"`
	Source   string    `json:"source,omitempty"`
	Messages []Message `json:"messages,omitempty"`
}

// Catalogue is the parsed catalogue.
type Catalogue struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Version    int     `json:"version"`
	Entries    []Entry `json:"entries"`

	byID map[string]int
}

// Default returns the embedded catalogue, parsed once.
var Default = sync.OnceValue(func() *Catalogue {
	c, err := parseJSON(catalogueJSON)
	if err != nil {
		panic(fmt.Sprintf("embedded catalogue: %v", err)) // caught by TestEmbeddedCatalogue
	}
	return c
})

var idRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Parse decodes and validates a catalogue document (YAML or JSON) strictly.
func Parse(data []byte) (*Catalogue, error) {
	var c Catalogue
	if err := yaml.UnmarshalStrict(data, &c); err != nil {
		return nil, fmt.Errorf("decode catalogue: %w", err)
	}
	return c.validate()
}

// parseJSON is Parse for a JSON document, without the YAML decoder's conversion.
func parseJSON(data []byte) (*Catalogue, error) {
	var c Catalogue
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode catalogue: %w", err)
	}
	return c.validate()
}

// validate checks a decoded catalogue and indexes its entries.
func (c Catalogue) validate() (*Catalogue, error) {
	c.byID = make(map[string]int, len(c.Entries))
	for i, e := range c.Entries {
		if !idRE.MatchString(e.ID) {
			return nil, fmt.Errorf("catalogue entry %d: id %q is not lower-case-with-dashes", i, e.ID)
		}
		if _, dup := c.byID[e.ID]; dup {
			return nil, fmt.Errorf("catalogue entry %q: duplicate id", e.ID)
		}
		if e.Severity.Rank() == 0 {
			return nil, fmt.Errorf("catalogue entry %q: severity %q", e.ID, e.Severity)
		}
		if e.Kind != "cause" && e.Kind != "finding" && e.Kind != "event" {
			return nil, fmt.Errorf("catalogue entry %q: kind %q: want cause, finding or event", e.ID, e.Kind)
		}
		if e.Title == "" || e.Meaning == "" || e.Remedy == "" {
			return nil, fmt.Errorf("catalogue entry %q: title, meaning and remedy are required", e.ID)
		}
		for _, m := range e.Messages {
			if m.Where != "" && m.Where != WhereAuth && m.Where != WhereAny {
				return nil, fmt.Errorf("catalogue entry %q message %q: where %q: want auth or any", e.ID, m.Key, m.Where)
			}
			for _, b := range []string{m.Since, m.Until} {
				if b != "" {
					if _, err := kubever.Parse(b); err != nil {
						return nil, fmt.Errorf("catalogue entry %q message %q: %w", e.ID, m.Key, err)
					}
				}
			}
		}
		c.byID[e.ID] = i
	}
	return &c, nil
}

// Get returns the entry for id.
func (c *Catalogue) Get(id string) (Entry, bool) {
	i, ok := c.byID[id]
	if !ok {
		return Entry{}, false
	}
	return c.Entries[i], true
}

// MustGet returns the entry for an ID that code names as a constant; it panics on a typo,
// which TestCatalogueIDsInCode catches.
func (c *Catalogue) MustGet(id string) Entry {
	e, ok := c.Get(id)
	if !ok {
		panic(fmt.Sprintf("catalogue: no entry %q", id))
	}
	return e
}

// IDs lists every ID, sorted.
func (c *Catalogue) IDs() []string {
	ids := make([]string, 0, len(c.Entries))
	for _, e := range c.Entries {
		ids = append(ids, e.ID)
	}
	sort.Strings(ids)
	return ids
}

// Spelling returns the text of message key for Kubernetes line v, if that line has one.
func (e Entry) Spelling(key string, v kubever.Version) (string, bool) {
	for _, m := range e.Messages {
		if m.Key == key && v.In(m.Since, m.Until) {
			return m.Text, true
		}
	}
	return "", false
}

// Format fills in the %-verbs of the spelling of key for line v.
func (e Entry) Format(key string, v kubever.Version, args ...any) string {
	text, ok := e.Spelling(key, v)
	if !ok {
		return ""
	}
	if len(args) == 0 {
		return text
	}
	return fmt.Sprintf(text, args...)
}
