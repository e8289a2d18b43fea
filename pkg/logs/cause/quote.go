// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cause

import "strings"

// A line that only quotes a failure is not a failure (issue 43). Components log credential
// errors they expect and survive at info or below — a credential chain probing its links
// (DefaultAzureCredential's "EnvironmentCredential authentication unavailable", the AWS SDK for
// Java's "Unable to load credentials from SystemPropertiesCredentialsProvider"), a gRPC access
// log repeating the session error of a request the component already reported (Argo CD's
// "finished unary call with code Unauthenticated"), a retry that went through — and lines that
// say they succeeded. Such a line names no cause, unknown included; a context event is not a
// failure and is unaffected.
//
// Three kinds of record are evidence at any severity, because their emitters write the failure
// nowhere else:
//   - a request's own record of a 401: access logs and audit events (Line.Audit, before any of
//     this), and client-go's request trace ("GET https://… 401 Unauthorized in 0 milliseconds",
//     kubectl -v and controllers at -v);
//   - Envoy's jwt_authn outcome ("Jwt authentication completed with: Jwks remote fetch is
//     failed"), which Envoy logs at debug only;
//   - a klog I line that opens with its failure ("Unable to register node with the apiserver:
//     …", "Could not retrieve token …"): glog-era kubelets and OpenShift masters logged those at
//     info.

// quotesOnly reports whether l, whose text is text, only quotes the failure it holds: it is
// logged at info or below, or says it succeeded, and is none of the records above.
func quotesOnly(l Line, text string) bool {
	switch severityClass(l) {
	case sevQuiet:
		return !ownRecord(l, text)
	case sevLoud:
		return false // the component's own judgement: an error is an error, whatever else it says
	}
	return succeeded(text)
}

type sevClass int

const (
	sevUnknown sevClass = iota
	sevQuiet            // info, debug, trace
	sevWarn             // warning: a failure unless the line says it succeeded
	sevLoud             // error and above
)

// severityClass is l's severity: klog's letter or a structured level when the reader found one,
// else the severity the message's head names in the forms loggers print it (severityOf).
func severityClass(l Line) sevClass {
	if l.Severity != "" {
		return levelClass(l.Severity)
	}
	return severityOf(l.Msg)
}

// levelClass classifies a level name or klog letter, in any case, without building a string:
// it runs for every line that names a cause.
func levelClass(s string) sevClass {
	if len(s) == 1 {
		switch s[0] | 0x20 {
		case 'i', 'd', 't':
			return sevQuiet
		case 'w':
			return sevWarn
		case 'e', 'f':
			return sevLoud
		}
		return sevUnknown
	}
	for _, l := range levels {
		if strings.EqualFold(s, l.name) {
			return l.class
		}
	}
	return sevUnknown
}

// levels are the level names levelClass knows beside klog's letters.
var levels = []struct {
	name  string
	class sevClass
}{
	{"info", sevQuiet}, {"error", sevLoud}, {"warn", sevWarn}, {"warning", sevWarn}, {"debug", sevQuiet},
	{"trace", sevQuiet}, {"fatal", sevLoud}, {"informational", sevQuiet}, {"debu", sevQuiet}, {"trac", sevQuiet},
	{"verbose", sevQuiet}, {"notice", sevQuiet}, {"erro", sevLoud}, {"err", sevLoud}, {"fata", sevLoud},
	{"critical", sevLoud}, {"crit", sevLoud}, {"panic", sevLoud}, {"dpanic", sevLoud}, {"severe", sevLoud},
	{"alert", sevLoud}, {"emerg", sevLoud},
}

// severityHead is how far into a message severityOf looks: past a timestamp, a thread or
// logger name, not into the message.
const severityHead = 96

// severityOf finds the severity a message's head names, as the loggers the consumers use print
// it: a word in capitals (INFO, DEBUG, ERROR, logrus's INFO[0000], hclog's [INFO], Python's
// "INFO:logger:" and "- DEBUG -", log4j's "DEBUG Class:"), a level in brackets ([debug] of Envoy,
// [Informational] of Azure's .NET event source), logfmt's level=info, the colon path of the
// Azure SDK for JavaScript (azure:identity:info) and, first in the message, a lower-case level
// (Istio's and zap's consoles: "info    JWT policy is …", kubectl's "error: …"). The first one
// found counts.
func severityOf(msg string) sevClass {
	head := msg
	if len(head) > severityHead {
		head = head[:severityHead]
	}
	first := true
	for i := 0; i < len(head); {
		if !isLetter(head[i]) {
			i++
			continue
		}
		j := i
		for j < len(head) && isLetter(head[j]) {
			j++
		}
		if j == len(head) && len(head) < len(msg) {
			break // a word cut by the head's end
		}
		word := head[i:j]
		var before, after byte
		if i > 0 {
			before = head[i-1]
		}
		if j < len(head) {
			after = head[j]
		}
		if c := wordSeverity(word, before, after, first, head[:i]); c != sevUnknown {
			return c
		}
		first = false
		i = j
	}
	return sevUnknown
}

// wordSeverity is the severity word names where it stands (severityOf), or sevUnknown.
func wordSeverity(word string, before, after byte, first bool, prefix string) sevClass {
	if isUpperWord(word) {
		if len(word) < 4 && word != "ERR" {
			return sevUnknown
		}
		return levelClass(word)
	}
	c := levelClass(word)
	if c == sevUnknown || len(word) < 4 {
		return sevUnknown
	}
	switch {
	case before == '[' && after == ']': // [debug], [Informational]
		return c
	case strings.HasSuffix(prefix, "level="): // logfmt
		return c
	case before == ':' && (after == ' ' || after == '\t') && word == strings.ToLower(word): // azure:identity:info
		return c
	case first && (after == ' ' || after == '\t' || after == ':') && word == strings.ToLower(word): // "info    JWT policy", "error: …"
		return c
	}
	return sevUnknown
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

func isUpperWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'A' || w[i] > 'Z' {
			return false
		}
	}
	return true
}

// ownRecord reports whether l, logged at info or below, is one of the records that are evidence
// at any severity (see above).
func ownRecord(l Line, text string) bool {
	if strings.Contains(text, "completed with: ") && !strings.Contains(text, "completed with: OK") {
		return true // Envoy's jwt_authn outcome
	}
	if l.Severity != "I" {
		return false
	}
	if requestTrace401(l.Msg) {
		return true
	}
	for _, w := range failureOpenings {
		if strings.HasPrefix(l.Msg, w) {
			return true
		}
	}
	return false
}

// failureOpenings open a klog I line that reports its own failure.
var failureOpenings = []string{"Unable to ", "unable to ", "Could not ", "could not ", "Couldn't ", "couldn't ",
	"Failed ", "failed ", "Error ", "error ", "Error: ", "error: ", "Cannot ", "cannot "}

// requestTrace401 reports whether msg is client-go's trace of a request answered 401:
// "GET https://… 401 Unauthorized in 0 milliseconds".
func requestTrace401(msg string) bool {
	sp := strings.IndexByte(msg, ' ')
	if sp < 3 || sp > 7 || !isUpperWord(msg[:sp]) {
		return false
	}
	return strings.Contains(msg[sp:], " 401 Unauthorized")
}

// succeeded reports whether text says it succeeded: "successfully", "authentication
// successful", "succeeded", "SUCCESS" as words of their own ("unsuccessful" is a failure).
func succeeded(text string) bool {
	for _, w := range successWords {
		for off := 0; ; {
			i := strings.Index(text[off:], w)
			if i < 0 {
				break
			}
			i += off
			if i == 0 || !isLetter(text[i-1]) {
				return true
			}
			off = i + len(w)
		}
	}
	return false
}

var successWords = []string{"successful", "Successful", "succeeded", "Succeeded", "SUCCESS"}
