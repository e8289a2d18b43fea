// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package cloud

import (
	"github.com/credwatch/credwatch/pkg/finding"
	"github.com/credwatch/credwatch/pkg/redact"
)

// scrubSecrets takes every password of items out of findings built from text credwatch did not
// write (controller log lines, which may echo a provider's fault with the password in it).
func scrubSecrets(fs []finding.Finding, items []Item) []finding.Finding {
	secrets := passwords(items)
	if len(secrets) == 0 {
		return fs
	}
	for i := range fs {
		fs[i].Message = redact.Secrets(fs[i].Message, secrets...)
		for j := range fs[i].Evidence {
			fs[i].Evidence[j].Value = redact.Secrets(fs[i].Evidence[j].Value, secrets...)
		}
	}
	return fs
}

// passwords are the passwords of items.
func passwords(items []Item) []string {
	var secrets []string
	for _, it := range items {
		if p := it.Password(); p != "" {
			secrets = append(secrets, p)
		}
	}
	return secrets
}
