// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

const (
	howSecretInformer = "Secret via an informer; fetched again on the next failed login (no restart needed)"
	howMounted        = "mounts it as a volume; parsed once at start-up"
)

// wellKnown reads one of the usual CPI/CSI objects, if it exists.
func (d *discoverer) wellKnown(ctx context.Context, w Source, cfgs *[]*Config, consumers map[*Config][]Consumer) {
	o, err := d.get(ctx, w)
	if errors.Is(err, errNotFound) {
		return
	}
	if err != nil {
		d.partial(err)
		return
	}
	var cons []Consumer
	for _, c := range d.inv.Components {
		if c.Namespace == w.Namespace && mounts(c.pod, w) {
			cons = append(cons, consumerOf(c, fmt.Sprintf("%s %s/%s: %s", w.Kind, w.Namespace, w.Name, howMounted), false))
		}
	}
	changed := o.changed
	src := w
	src.Changed = &changed
	if w.Kind == SourceSecret && isVSphereCredSecret(o.data) {
		creds, notes := VSphereFromSecret(o.data, src, nil, nil)
		d.inv.Notes = append(d.inv.Notes, notes...)
		for _, c := range creds {
			d.addItem(c, cons)
		}
		return
	}
	keys := make([]string, 0, len(o.data))
	for k := range o.data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ks := src
		ks.Key = k
		if d.seen[ks.String()] {
			continue
		}
		d.seen[ks.String()] = true
		cfg, err := Parse(o.data[k], ks)
		if errors.Is(err, ErrUnknownFormat) {
			continue
		}
		if err != nil {
			d.problem(ks.String(), err)
			continue
		}
		*cfgs = append(*cfgs, cfg)
		consumers[cfg] = append(consumers[cfg], cons...)
	}
}

func isVSphereCredSecret(data map[string][]byte) bool {
	for k := range data {
		if strings.HasSuffix(k, ".username") || strings.HasPrefix(k, "server_") {
			return true
		}
	}
	return false
}

// addConfig adds a config's inline credentials and the Secrets it names.
func (d *discoverer) addConfig(ctx context.Context, cfg *Config, cons []Consumer) {
	for _, n := range cfg.Notes {
		d.inv.Notes = append(d.inv.Notes, cfg.Source.String()+": "+n)
	}
	for _, c := range cfg.Credentials {
		if c.Source.Changed == nil {
			c.Source.Changed = cfg.Source.Changed
		}
		cc := cons
		if c.Source.Kind == SourceSecretsDirectory {
			cc = withHow(cons, "secrets-directory "+cfg.SecretsDirectory+", parsed once at start-up")
		}
		d.addItem(c, cc)
	}
	for _, ref := range cfg.SecretRefs {
		src := Source{Kind: SourceSecret, Namespace: ref.Namespace, Name: ref.Name}
		if d.cs == nil {
			d.inv.Notes = append(d.inv.Notes, fmt.Sprintf("%s names Secret %s/%s: not read (no cluster access)", cfg.Source, ref.Namespace, ref.Name))
			continue
		}
		o, err := d.get(ctx, src)
		if err != nil {
			if !errors.Is(err, errNotFound) {
				d.partial(err)
			}
			what := ""
			if len(ref.Servers) > 0 {
				what = " for " + strings.Join(ref.Servers, ",")
			}
			d.problem(src.String(), fmt.Errorf("named by %s (secret-name/secret-namespace)%s: %w; its consumers (%s) cannot log in",
				cfg.Source, what, err, names(cons)))
			continue
		}
		changed := o.changed
		src.Changed = &changed
		cfgSrc := cfg.Source
		switch cfg.Provider {
		case VSphere:
			creds, notes := VSphereFromSecret(o.data, src, &ref, &cfgSrc)
			d.inv.Notes = append(d.inv.Notes, notes...)
			for _, c := range creds {
				d.addItem(c, rereading(cons))
			}
		case OpenStack:
			src.Key = "clouds.conf"
			data, ok := o.data[src.Key]
			if !ok {
				d.problem(src.String(), fmt.Errorf("named by %s: no key clouds.conf", cfg.Source))
				continue
			}
			sc, err := Parse(data, src)
			if err != nil {
				d.problem(src.String(), err)
				continue
			}
			for _, c := range sc.Credentials {
				c.Config = &cfgSrc
				d.addItem(c, withHow(cons, "Secret read once at start-up (in-tree OpenStack)"))
			}
		}
	}
}

func withHow(cons []Consumer, how string) []Consumer {
	out := make([]Consumer, len(cons))
	for i, c := range cons {
		c.How = how
		out[i] = c
	}
	return out
}

func rereading(cons []Consumer) []Consumer {
	out := withHow(cons, howSecretInformer)
	for i := range out {
		out[i].Rereads = true
	}
	return out
}

func names(cons []Consumer) string {
	var n []string
	for _, c := range cons {
		if c.Pod != "" {
			n = append(n, c.Component+" "+c.Pod)
		} else {
			n = append(n, c.Component)
		}
	}
	if len(n) == 0 {
		return "none seen"
	}
	return strings.Join(n, ", ")
}

// addItem adds a credential, merging consumers into an existing item for the same source and account.
func (d *discoverer) addItem(c Credential, cons []Consumer) {
	for i := range d.inv.Items {
		it := &d.inv.Items[i]
		if it.Source.String() == c.Source.String() && it.Account() == c.Account() {
			if it.Config == nil && c.Config != nil {
				// First seen as a well-known Secret; the config naming it says how to connect.
				it.Config, it.Port, it.Insecure, it.CAFile = c.Config, c.Port, c.Insecure, c.CAFile
			}
			for _, n := range cons {
				if !containsConsumer(it.Consumers, n) {
					it.Consumers = append(it.Consumers, n)
				}
			}
			return
		}
	}
	d.inv.Items = append(d.inv.Items, Item{Credential: c, Consumers: append([]Consumer(nil), cons...)})
}

func containsConsumer(cs []Consumer, c Consumer) bool {
	for _, x := range cs {
		if x.Component == c.Component && x.Pod == c.Pod {
			return true
		}
	}
	return false
}

// procStartSlop: a host process's start time is read as /proc/stat's boot time, in whole seconds
// rounded down, plus its start in clock ticks; it may be up to a second early, so a file written
// just before such a process started is not taken as changed after it.
const procStartSlop = time.Second

// judgeStaleness marks consumers that do not re-read and started before the credential changed.
func (it *Item) judgeStaleness() {
	ch := it.Source.Changed
	for i := range it.Consumers {
		c := &it.Consumers[i]
		if c.Started == nil {
			c.Stale = false
			continue
		}
		started := *c.Started
		if c.PID != 0 {
			started = started.Add(procStartSlop)
		}
		c.Stale = !c.Rereads && ch != nil && started.Before(*ch)
	}
}

// decideAction fills Action from the verdict and the consumers.
func (it *Item) decideAction() {
	var stale, restart, reread, looping []string
	for _, c := range it.Consumers {
		switch {
		case c.Looping:
			looping = append(looping, "the kubelet of node "+c.Node)
		case c.Stale:
			stale = append(stale, c.Restart)
		case c.Rereads:
			reread = append(reread, c.Component)
		case c.Restart != "":
			restart = append(restart, c.Restart)
		}
	}
	switch {
	case it.Test.Verdict == Rejected && len(looping) > 0 && len(restart)+len(stale)+len(reread) == 0:
		it.Action = fmt.Sprintf("update %s with the new password", it.Source)
	case it.Test.Verdict == Rejected && len(restart)+len(stale) > 0:
		it.Action = fmt.Sprintf("update %s with the new password, then restart: %s", it.Source, strings.Join(uniq(append(stale, restart...)), "; "))
	case it.Test.Verdict == Rejected && len(reread) > 0:
		it.Action = fmt.Sprintf("update %s with the new password; %s re-read it on the next failed login (no restart)", it.Source, strings.Join(uniq(reread), ", "))
	case it.Test.Verdict == Rejected:
		it.Action = fmt.Sprintf("update %s with the new password, then restart whatever reads it", it.Source)
	case len(stale) > 0:
		it.Action = "restart: " + strings.Join(uniq(stale), "; ")
	default:
		it.Action = "nothing to do"
	}
	if len(looping) > 0 && it.Test.Verdict == Rejected {
		it.Action += fmt.Sprintf("; %s restarts by itself every ~10 s (crash loop) and reads it again then", strings.Join(uniq(looping), ", "))
	}
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
