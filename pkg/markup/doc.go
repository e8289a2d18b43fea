// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Package markup writes the HTML and inline SVG of credwatch's self-contained pages (logs
// --html, watch --report) without html/template.
//
// Why not html/template: executing any text/template or html/template calls
// reflect.Value.MethodByName with a name known only at run time. When a binary can reach that
// call, the Go linker keeps every exported method of every type converted to an interface,
// because a template might call it. In credwatch that kept every generated client-go and k8s.io/api
// method: about 22 MB of a 71 MB binary (hack/binsize.sh fails the build when the executor is back).
//
// The rule that makes a Writer safe: Raw takes only markup that is a constant of the program
// (tags, CSS); every piece of data goes through Text, Textf or an attribute value, which are
// escaped. Data is redacted before it reaches a page; escaping keeps it text.
package markup
