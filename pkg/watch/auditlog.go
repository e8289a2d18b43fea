// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package watch

import (
	"errors"
	"fmt"

	"github.com/credwatch/credwatch/pkg/logs/audit"
)

// auditLogs follows members' audit logs (--audit-log HOST=PATH) and counts the service-account
// token uses their new events name (audit.Event.TokenUse). It is used from the loop goroutine
// only.
type auditLogs struct {
	files []LogFile
	tails []*tailer
	acct  *saAccounts
	// judged: a line of the file was read as an audit event; until then each poll reads its
	// first new line as one, and notAudit says why the last one read was not (the file is
	// listed as unavailable until a line is one).
	judged   []bool
	notAudit []string
	errs     map[string]string // the last error following each file ("audit-log PATH")
}

func newAuditLogs(files []LogFile, limit int) *auditLogs {
	al := &auditLogs{files: files, acct: newSAAccounts(limit), judged: make([]bool, len(files)),
		notAudit: make([]string, len(files)), errs: map[string]string{}}
	for _, f := range files {
		t := newTailer(f.Path)
		t.lineMax = auditLineMax
		al.tails = append(al.tails, t)
	}
	return al
}

// poll reads every file's new lines and counts the token uses they name.
func (al *auditLogs) poll() {
	for i, t := range al.tails {
		src := "audit-log " + t.path
		lines, err := t.poll()
		if len(lines) > 0 && !al.judged[i] {
			al.notAudit[i] = ""
			if jerr := judgeAudit(lines[0]); jerr != nil {
				al.notAudit[i] = jerr.Error()
			} else {
				al.judged[i] = true
			}
		}
		switch {
		case err != nil:
			al.errs[src] = err.Error()
		case al.notAudit[i] != "":
			al.errs[src] = al.notAudit[i]
		default:
			delete(al.errs, src)
		}
		al.feed(al.files[i].Host, lines)
	}
}

// judgeAudit says why line is not an audit event, nil when it is one.
func judgeAudit(line string) error {
	_, err := audit.ParseLine([]byte(line))
	if errors.Is(err, audit.ErrNotAudit) {
		return fmt.Errorf("not an audit log (--audit-log-format=json, one event a line): %w", err)
	}
	return nil
}

// feed counts the token uses that member's audit log lines name. Only lines that carry one of
// the annotations are decoded; one that is not an event (a piece of a line longer than
// auditLineMax, a line being written) is skipped.
func (al *auditLogs) feed(member string, lines []string) {
	for _, line := range lines {
		if !audit.MayNameTokenUse(line) {
			continue
		}
		evs, err := audit.ParseLine([]byte(line))
		if err != nil {
			continue
		}
		for i := range evs {
			if u, ok := evs[i].TokenUse(); ok {
				al.acct.add(member, u)
			}
		}
	}
}

// behind lists the files the last poll left unread, in the order of the flags.
func (al *auditLogs) behind() []LogBehind { return behindOf(al.files, al.tails) }

func (al *auditLogs) close() { closeAll(al.tails) }
