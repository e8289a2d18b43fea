// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/kubever"
)

// Cause IDs the check names itself.
const (
	causeIssuer      = "issuer-not-accepted"
	causeKey         = "signing-key-unknown"
	causeAudience    = "audience-mismatch"
	causeUnknown     = "unknown"
	cellUnreachable  = "unreachable"
	bareBearerToken  = "invalid bearer token"
	verbPlaceholders = `%q|%s|%v|%d`
)

type spelling struct {
	id   string
	text string
	re   *regexp.Regexp
	msg  catalogue.Message
}

var spellings = sync.OnceValue(func() []spelling {
	verbs := regexp.MustCompile(verbPlaceholders)
	var out []spelling
	for _, e := range catalogue.Default().Entries {
		if e.Kind != "cause" {
			continue
		}
		for _, m := range e.Messages {
			if m.Text == bareBearerToken {
				continue // the loopback authenticator's prefix; only meaningful alone
			}
			parts := verbs.Split(m.Text, -1)
			for i, p := range parts {
				parts[i] = regexp.QuoteMeta(p)
			}
			re, err := regexp.Compile(strings.Join(parts, `.*?`))
			if err != nil {
				continue
			}
			out = append(out, spelling{id: e.ID, text: m.Text, re: re, msg: m})
		}
	}
	// Most specific (longest) spelling first.
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].text) > len(out[j].text) })
	return out
})

// CauseOf maps an authentication error text (a TokenReview status.error, or the err= of an
// "Unable to authenticate the request" line) to a catalogue cause ID, preferring spellings valid
// for version (zero version: any line). An empty text for a rejected token means no authenticator
// claimed it, which is what a foreign issuer gives.
func CauseOf(text string, version kubever.Version) string {
	t := strings.TrimSpace(text)
	if t == "" || t == bareBearerToken || t == "["+bareBearerToken+"]" {
		return causeIssuer
	}
	best := ""
	for _, s := range spellings() {
		if !s.re.MatchString(t) {
			continue
		}
		if version.IsZero() || version.In(s.msg.Since, s.msg.Until) {
			return s.id
		}
		if best == "" {
			best = s.id
		}
	}
	if best != "" {
		return best
	}
	return causeUnknown
}
