// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package check

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ensureProbeSA checks (and with CreateProbeSA creates) the probe service account. A forbidden
// GET is not fatal: minting will say whether the account is usable.
func (f *fetcher) ensureProbeSA(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, f.c.Timeout)
	defer cancel()
	ns, name := f.c.ProbeNamespace, f.c.ProbeName
	_, err := f.cs.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil, apierrors.IsForbidden(err) && !f.c.CreateProbeSA:
		return nil
	case apierrors.IsNotFound(err) && !f.c.CreateProbeSA:
		return fmt.Errorf("probe service account %s/%s not found: pass --create-probe-sa, apply the RBAC `credwatch check --print-rbac` prints, or name one with --probe-serviceaccount", ns, name)
	case err != nil && !apierrors.IsNotFound(err):
		return fmt.Errorf("get probe service account %s/%s: %w", ns, name, err)
	}
	_, err = f.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("create namespace %s for the probe service account: %w", ns, err)
	}
	_, err = f.cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "credwatch"}}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create probe service account %s/%s: %w", ns, name, err)
	}
	return nil
}

// matrix takes the probe token minted through every reachable member (early, started beside
// the members' probes) and has every member review it, then reviews the user's tokens the same
// way. reason is set when the matrix could not be built.
func (f *fetcher) matrix(ctx context.Context, members []Member, clients []*memberClient, early *earlyMints) (*Matrix, []TokenProbe, string) {
	names := make([]string, len(members))
	for i, m := range members {
		names[i] = m.Name
	}
	sem := make(chan struct{}, f.c.Parallel)
	var wg sync.WaitGroup
	run := func(fn func()) {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			fn()
		})
	}

	var rows []Row
	tokens := make([]string, len(members))
	reason := ""
	early.wait()
	if err := early.saErr; err != nil {
		reason = ReasonOf(err)
	} else {
		rows = make([]Row, len(members))
		for i := range members {
			rows[i] = Row{Token: "minted through " + members[i].Name, Via: members[i].Name}
			if !members[i].Reachable || clients[i] == nil {
				rows[i].Error = "member unreachable"
				continue
			}
			tok, auds, err := early.minted[i].token, early.minted[i].audiences, early.minted[i].err
			if err != nil {
				rows[i].Error, members[i].MintErr = err.Error(), err.Error()
				continue
			}
			tokens[i] = tok
			members[i].APIAudiences = auds
			if ti, err := decodeToken(tok); err == nil {
				members[i].SigningKID, members[i].SigningIss = ti.KID, ti.Issuer
				rows[i].Issuer, rows[i].KID, rows[i].Audiences, rows[i].Summary = ti.Issuer, ti.KID, ti.Audiences, ti.summary()
			}
		}
		f.keepMinted(members, tokens)
	}

	user := make([]Row, len(f.c.Tokens))
	userTok := make([]string, len(f.c.Tokens))
	for i, t := range f.c.Tokens {
		user[i] = Row{Token: t.Name}
		userTok[i] = t.Token
		if ti, err := decodeToken(t.Token); err == nil {
			user[i].Issuer, user[i].KID, user[i].Audiences, user[i].Summary = ti.Issuer, ti.KID, ti.Audiences, ti.summary()
		} else {
			user[i].Summary = err.Error()
		}
	}

	reviewAll := func(rs []Row, toks []string) {
		for r := range rs {
			rs[r].Cells = make([]Cell, len(members))
			for j := range members {
				rs[r].Cells[j] = Cell{Member: members[j].Name}
				switch {
				case toks[r] == "":
					rs[r].Cells[j].Cause, rs[r].Cells[j].Message = "not-minted", rs[r].Error
				case members[j].rejectsUs && clients[j] != nil:
					run(func() { rs[r].Cells[j] = present(ctx, f.c, clients[j], &members[j], toks[r]) })
				case !members[j].Reachable || clients[j] == nil:
					rs[r].Cells[j].Cause, rs[r].Cells[j].Message = cellUnreachable, members[j].Error
				default:
					run(func() { rs[r].Cells[j] = review(ctx, f.c, clients[j], &members[j], toks[r], rs[r].Audiences) })
				}
			}
		}
	}
	reviewAll(rows, tokens)
	reviewAll(user, userTok)
	wg.Wait()

	if reason != "" {
		return nil, user, reason
	}
	minted := 0
	var firstErr string
	for _, r := range rows {
		if r.Error == "" {
			minted++
		} else if firstErr == "" && r.Error != "member unreachable" {
			firstErr = r.Error
		}
	}
	if minted == 0 {
		if firstErr == "" {
			firstErr = "no member reachable"
		}
		return nil, user, "no probe token could be minted: " + firstErr
	}
	if msg := allForbidden(rows); msg != "" {
		return nil, user, msg
	}
	return &Matrix{ServiceAccount: f.c.ProbeNamespace + "/" + f.c.ProbeName, Members: names, Rows: rows}, user, ""
}

// allForbidden returns a reason when every review was refused by authorization.
func allForbidden(rows []Row) string {
	n, forbidden, first := 0, 0, ""
	for _, r := range rows {
		for _, c := range r.Cells {
			if c.Cause == "not-minted" {
				continue
			}
			n++
			if c.Cause == cellUnreachable && containsForbidden(c.Message) {
				forbidden++
				if first == "" {
					first = c.Message
				}
			}
		}
	}
	if n > 0 && forbidden == n {
		return "every TokenReview was forbidden: " + first
	}
	return ""
}

func containsForbidden(s string) bool {
	return len(s) > 0 && (indexFold(s, "forbidden") >= 0)
}

// keepMinted records in the snapshot the probe token minted through each member, by member
// name: watch holds them, as a pod holds its projected token, and reviews them later.
func (f *fetcher) keepMinted(members []Member, tokens []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, tok := range tokens {
		if tok == "" {
			continue
		}
		if f.snap.Minted == nil {
			f.snap.Minted = map[string]string{}
		}
		f.snap.Minted[members[i].Name] = tok
	}
}
