// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package preflight

import (
	"regexp"
	"strings"

	"github.com/credwatch/credwatch/pkg/preflight/input"
	"github.com/credwatch/credwatch/pkg/redact"
)

// findRewrite finds a pre- or postKubeadmCommand that rewrites issuer with sed, directly or
// through a script from files.
func findRewrite(spec input.KubeadmConfigSpec, issuer string) *Rewrite {
	if issuer == "" {
		return nil
	}
	scripts := map[string]string{}
	for _, f := range spec.Files {
		scripts[f.Path] = f.Text()
	}
	check := func(cmd string, post bool) *Rewrite {
		text := cmd
		for p, body := range scripts {
			if strings.Contains(cmd, p) {
				text += "\n" + body
			}
		}
		if !strings.Contains(text, "sed") || !strings.Contains(text, issuer) {
			return nil
		}
		// The command and the scripts it runs are printed: they go through the one redaction
		// (a curl -u user:password, a token in a header) before anything keeps them.
		rw := &Rewrite{Raw: issuer, Command: redact.Text(strings.TrimSpace(cmd)), Value: redact.Text(replacement(text, issuer))}
		switch {
		case strings.Contains(text, "/etc/kubernetes/manifests"):
			rw.AfterStart = true
		case strings.Contains(text, "/run/kubeadm/kubeadm.yaml") && !strings.Contains(text, "kubeadm-join-config"):
			rw.InitOnly = true
		case post:
			rw.AfterStart = true
		}
		return rw
	}
	for _, c := range spec.PreKubeadmCommands {
		if rw := check(c, false); rw != nil {
			return rw
		}
	}
	for _, c := range spec.PostKubeadmCommands {
		if rw := check(c, true); rw != nil {
			return rw
		}
	}
	return nil
}

// replacement names what sed puts in place of issuer ("s|RAW|$DOMAIN|g" gives "$DOMAIN"), so
// that the same rewrite in current and planned compares equal whatever command runs it.
func replacement(text, issuer string) string {
	for _, sep := range []string{"|", "/", "#", ","} {
		q := regexp.QuoteMeta(sep)
		re := regexp.MustCompile("s" + q + regexp.QuoteMeta(issuer) + q + "([^" + q + "]*)" + q)
		if m := re.FindStringSubmatch(text); m != nil {
			return m[1]
		}
	}
	return "?"
}
