// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/credwatch/credwatch/internal/app"
	"github.com/credwatch/credwatch/internal/cli"
	"github.com/credwatch/credwatch/pkg/catalogue"
	"github.com/credwatch/credwatch/pkg/check"
	"github.com/credwatch/credwatch/pkg/report"
)

//go:embed runbook.md.tmpl
var pageTemplate string

// labDir holds what `runbook capture` took from a lab (relative to the repository root).
const labDir = "hack/runbook/testdata/lab"

// renderFile writes the runbook to out; run it from the repository root.
func renderFile(ctx context.Context, out string) error {
	page, err := render(ctx)
	if err != nil {
		return err
	}
	return os.WriteFile(out, page, 0o644)
}

// render executes the page template. Every {{run}}, {{check}}, {{watch}}, {{field}} and
// {{cloud}} prints what the current code prints for committed input; {{remedy}} is the
// catalogue's text, the same `credwatch explain ID` prints.
func render(ctx context.Context) ([]byte, error) {
	r := &renderer{ctx: ctx}
	defer r.cleanup()
	tmpl, err := template.New("runbook").Funcs(template.FuncMap{
		"run":    r.run,
		"check":  r.check,
		"watch":  r.watch,
		"field":  r.field,
		"cloud":  r.cloud,
		"remedy": remedy,
		"title":  title,
		"minted": minted,
		"lab":    func(name string) string { return filepath.Join(labDir, name) },
	}).Parse(pageTemplate)
	if err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, nil); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	return b.Bytes(), nil
}

type renderer struct {
	ctx  context.Context
	tmps []string
	// replace rewrites volatile strings of the next outputs (temporary directories, ports).
	replace []string
}

func (r *renderer) cleanup() {
	for _, d := range r.tmps {
		_ = os.RemoveAll(d)
	}
}

func (r *renderer) tempDir() (string, error) {
	d, err := os.MkdirTemp("", "runbook-")
	if err == nil {
		r.tmps = append(r.tmps, d)
	}
	return d, err
}

// run runs `credwatch ARGS...` in-process and returns the command line and its standard
// output as a fenced block. An argument holding * is expanded as a shell would.
func (r *renderer) run(args ...string) (string, error) {
	var argv []string
	for _, a := range args {
		if strings.Contains(a, "*") {
			m, err := filepath.Glob(a)
			if err != nil || len(m) == 0 {
				return "", fmt.Errorf("%s matches nothing", a)
			}
			argv = append(argv, m...)
			continue
		}
		argv = append(argv, a)
	}
	var out, errOut bytes.Buffer
	err := app.Run(r.ctx, cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, append([]string{"credwatch"}, argv...))
	if code := cli.Code(err); code == cli.ExitUsage || code == cli.ExitInternal {
		return "", fmt.Errorf("credwatch %s: exit %d: %v\n%s", strings.Join(argv, " "), code, err, errOut.String())
	}
	return block("credwatch "+strings.Join(args, " "), out.String(), r.replace), nil
}

// runIn is run in directory dir, as a person would run it where the files are: the output names
// them without the temporary directory, whose name (and length) changes every run.
func (r *renderer) runIn(dir string, args ...string) (out string, err error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if err := os.Chdir(dir); err != nil {
		return "", err
	}
	defer func() { err = errors.Join(err, os.Chdir(wd)) }()
	return r.run(args...)
}

// block is a fenced block: the command, then its output.
func block(cmdline, output string, replace []string) string {
	if len(replace) > 0 {
		output = strings.NewReplacer(replace...).Replace(output)
		cmdline = strings.NewReplacer(replace...).Replace(cmdline)
	}
	return "```console\n$ " + cmdline + "\n" + strings.TrimRight(output, "\n") + "\n```"
}

// check prints a committed check snapshot through check.Run and the table printer, as
// `credwatch check` prints it.
func (r *renderer) check(name, cmdline string) (string, error) {
	var cs capturedSnapshot
	if err := readJSON(filepath.Join(labDir, name), &cs); err != nil {
		return "", err
	}
	snap := cs.restore()
	rep := check.Run(snap, check.Registry())
	var b bytes.Buffer
	if err := report.Print(&b, report.Table, rep); err != nil {
		return "", err
	}
	return block(cmdline, b.String(), nil), nil
}

// remedy is the catalogue's remedy of id, as `credwatch explain ID` prints it.
func remedy(id string) (string, error) {
	e, ok := catalogue.Default().Get(id)
	if !ok {
		return "", fmt.Errorf("remedy: no catalogue entry %q", id)
	}
	return strings.TrimSpace(e.Remedy), nil
}

// title is the catalogue's title of id.
func title(id string) (string, error) {
	e, ok := catalogue.Default().Get(id)
	if !ok {
		return "", fmt.Errorf("title: no catalogue entry %q", id)
	}
	return e.Title, nil
}

// minted is when capture minted the token file, plus after (a Go duration): a fixed --at.
func minted(file, after string) (string, error) {
	var m map[string]string
	if err := readJSON(filepath.Join(labDir, "tokens", "minted.json"), &m); err != nil {
		return "", err
	}
	t, err := time.Parse(time.RFC3339, m[file])
	if err != nil {
		return "", fmt.Errorf("minted %s: %w", file, err)
	}
	d, err := time.ParseDuration(after)
	if err != nil {
		return "", err
	}
	return t.Add(d).Format(time.RFC3339), nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w (run make runbook-capture)", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a field the code no longer has: the capture is older than the code
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode %s: %w (run make runbook-capture)", path, err)
	}
	return nil
}
