// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

// Command dashshot draws a Grafana dashboard from a Prometheus server's data and screenshots it
// with headless Chromium, for the docs (docs/metrics.md shows the credential dashboard drawn from
// the lab's data). There is no Grafana here: dashshot reads the dashboard JSON, runs each panel's
// queries through /api/v1/query_range, and lays the panels out as Grafana would (gridPos on 24
// columns, titles, one line per series named by its legendFormat, the unit on the y axis, "No
// data" where a panel's queries returned nothing).
//
//	go run ./hack/dashshot --prometheus http://127.0.0.1:9090 \
//	  --start 2026-12-07T17:00:00Z --end 2026-12-07T18:00:00Z --step 15s \
//	  --var cluster=lab --out docs/img/credentials-dashboard.png
//
// Flags:
//
//	--prometheus URL   the Prometheus server (required); dashshot contacts nothing else
//	--dashboard FILE   the dashboard JSON (deploy/mixin/dashboards/credwatch-credentials.json)
//	--start, --end     the time range: RFC 3339, Unix seconds, "now" or "now-DURATION" (now-1h, now)
//	--step DURATION    the query resolution (Go duration or seconds; default: the range / 300)
//	--scrape-interval  the data source's scrape interval, for $__rate_interval (15s)
//	--var NAME=VALUE   a template variable's value; repeat a multi-value variable's for several.
//	                   Without one, a variable that allows All is All (.*), another its saved value
//	--out FILE.png     the screenshot (required)
//	--html FILE        also keep the page dashshot drew (default: a temporary file, removed)
//	--title TEXT       the page's title (default: the dashboard's)
//	--theme dark|light Grafana's theme (dark)
//	--width PIXELS     the page's width (1600); the height follows from the panels
//	--chromium PATH    the Chromium to run (chromium, from PATH)
//	--timeout DURATION for all queries and the screenshot together (2m)
//
// Variables are substituted as Grafana does for a query: $name, ${name}, ${name:format} and
// [[name]], a value regex-escaped when the variable allows All or several values; $__interval is
// the step, $__rate_interval max(step + scrape interval, 4 × scrape interval), $__range the range.
// Panel types drawn: timeseries (and the old graph), stat (each series' last value) and row; any
// other is a box saying it is not drawn. Times are UTC. A failure is one line on stderr and exit 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// defaultDashboard is the credential mixin's dashboard, relative to the repository's root.
const defaultDashboard = "deploy/mixin/dashboards/credwatch-credentials.json"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, time.Now())
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashshot:", oneLine(err.Error()))
		os.Exit(1)
	}
}

// options are dashshot's flags, as given.
type options struct {
	dashboard, prometheus, start, end, step, out, html, title, theme, chromium string
	scrape, timeout                                                            time.Duration
	width                                                                      int
	vars                                                                       map[string][]string
}

// config is what the flags mean.
type config struct {
	dashboard, prometheus, out, html, title, chromium string
	start, end                                        time.Time
	step, scrape, timeout                             time.Duration
	width                                             int
	theme                                             theme
	vars                                              map[string][]string
}

// parseFlags reads the flags; -h writes their usage to help and returns flag.ErrHelp.
func parseFlags(args []string, help io.Writer) (options, error) {
	o := options{vars: map[string][]string{}}
	fs := flag.NewFlagSet("dashshot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.dashboard, "dashboard", defaultDashboard, "the Grafana dashboard JSON")
	fs.StringVar(&o.prometheus, "prometheus", "", "the Prometheus server's URL (required)")
	fs.StringVar(&o.start, "start", "now-1h", "start of the range: RFC 3339, Unix seconds, now or now-DURATION")
	fs.StringVar(&o.end, "end", "now", "end of the range, as --start")
	fs.StringVar(&o.step, "step", "", "query resolution: a Go duration or seconds (default: the range / 300)")
	fs.DurationVar(&o.scrape, "scrape-interval", 15*time.Second, "the data source's scrape interval, for $__rate_interval")
	fs.Func("var", "NAME=VALUE of a template variable (repeat for several values)", func(s string) error {
		name, val, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return fmt.Errorf("want NAME=VALUE, got %q", s)
		}
		o.vars[name] = append(o.vars[name], val)
		return nil
	})
	fs.StringVar(&o.out, "out", "", "the PNG to write (required)")
	fs.StringVar(&o.html, "html", "", "also keep the drawn page in this file")
	fs.StringVar(&o.title, "title", "", "the page's title (default: the dashboard's)")
	fs.StringVar(&o.theme, "theme", "dark", "dark or light")
	fs.IntVar(&o.width, "width", 1600, "the page's width in pixels")
	fs.StringVar(&o.chromium, "chromium", "chromium", "the Chromium binary")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "for all queries and the screenshot together")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(help, "usage: go run ./hack/dashshot --prometheus URL --out FILE.png [flags] (see hack/dashshot/main.go)")
			fs.SetOutput(help)
			fs.PrintDefaults()
		}
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q (all input is by flags)", fs.Arg(0))
	}
	return o, nil
}

// complete turns the flags into a config, at time now for "now" in --start and --end.
func (o options) complete(now time.Time) (config, error) {
	c := config{dashboard: o.dashboard, prometheus: o.prometheus, out: o.out, html: o.html, title: o.title,
		chromium: o.chromium, scrape: o.scrape, timeout: o.timeout, width: o.width, vars: o.vars}
	var err error
	switch {
	case o.prometheus == "":
		return config{}, errors.New("--prometheus is required")
	case o.out == "":
		return config{}, errors.New("--out is required")
	case !strings.EqualFold(filepath.Ext(o.out), ".png"):
		return config{}, fmt.Errorf("--out %s: want a .png file", o.out)
	case o.width < 400:
		return config{}, fmt.Errorf("--width %d: want at least 400", o.width)
	case o.scrape <= 0:
		return config{}, fmt.Errorf("--scrape-interval %s: want more than 0", o.scrape)
	}
	if c.start, err = parseTime(o.start, now); err != nil {
		return config{}, fmt.Errorf("--start: %w", err)
	}
	if c.end, err = parseTime(o.end, now); err != nil {
		return config{}, fmt.Errorf("--end: %w", err)
	}
	if !c.end.After(c.start) {
		return config{}, fmt.Errorf("--end %s is not after --start %s", c.end.Format(time.RFC3339), c.start.Format(time.RFC3339))
	}
	c.step = max(c.end.Sub(c.start)/300, time.Second).Round(time.Second)
	if o.step != "" {
		if c.step, err = parseStep(o.step); err != nil {
			return config{}, fmt.Errorf("--step: %w", err)
		}
	}
	if c.theme, err = themeNamed(o.theme); err != nil {
		return config{}, err
	}
	return c, nil
}

// parseTime reads RFC 3339, Unix seconds (with a fraction), "now" or "now-DURATION".
func parseTime(s string, now time.Time) (time.Time, error) {
	if rest, ok := strings.CutPrefix(s, "now"); ok {
		if rest == "" {
			return now.UTC(), nil
		}
		d, err := time.ParseDuration(strings.TrimPrefix(rest, "-"))
		if err != nil || !strings.HasPrefix(rest, "-") {
			return time.Time{}, fmt.Errorf("%q: want now or now-DURATION (now-1h)", s)
		}
		return now.Add(-d).UTC(), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return unixTime(f), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want RFC 3339, Unix seconds, now or now-DURATION", s)
	}
	return t.UTC(), nil
}

// parseStep reads a Go duration or a number of seconds.
func parseStep(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return 0, fmt.Errorf("%q: want a duration (15s) or seconds", s)
		}
		d = time.Duration(f * float64(time.Second))
	}
	if d < time.Millisecond {
		return 0, fmt.Errorf("%q: want at least 1ms", s)
	}
	return d, nil
}

// run draws the dashboard and screenshots it; it says on stdout what it wrote.
func run(ctx context.Context, args []string, stdout io.Writer, now time.Time) error {
	o, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	c, err := o.complete(now)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	prom, err := newPrometheus(c.prometheus, c.timeout)
	if err != nil {
		return err
	}
	v, err := draw(ctx, c, prom)
	if err != nil {
		return err
	}
	page, err := renderHTML(v)
	if err != nil {
		return err
	}
	htmlPath := c.html
	if htmlPath == "" {
		dir, err := os.MkdirTemp("", "dashshot-")
		if err != nil {
			return fmt.Errorf("temporary directory for the page: %w", err)
		}
		defer os.RemoveAll(dir)
		htmlPath = filepath.Join(dir, "dashboard.html")
	}
	if err := os.WriteFile(htmlPath, page, 0o644); err != nil {
		return fmt.Errorf("write the page: %w", err)
	}
	if err := screenshot(ctx, c.chromium, htmlPath, c.out, v.Width, v.Height); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "dashshot: wrote %s (%d×%d, %d panels)\n", c.out, v.Width, v.Height, len(v.Panels))
	return err
}

// draw queries every panel's targets and lays the page out.
func draw(ctx context.Context, c config, prom *prometheus) (pageView, error) {
	d, err := loadDashboard(c.dashboard)
	if err != nil {
		return pageView{}, err
	}
	b, err := bindVariables(d, c.vars)
	if err != nil {
		return pageView{}, err
	}
	b = b.withIntervals(c.start, c.end, c.step, c.scrape)
	in := pageInput{Title: d.Title, Start: c.start, End: c.end, Step: c.step, Width: c.width, Theme: c.theme}
	if c.title != "" {
		in.Title = c.title
	}
	for _, v := range d.Templating.List {
		if val, ok := b.display[v.Name]; ok && v.Hide == 0 && v.Type != "datasource" && v.Type != "constant" {
			label := v.Label
			if label == "" {
				label = v.Name
			}
			in.Vars = append(in.Vars, varChip{Label: label, Value: val})
		}
	}
	for _, p := range d.Panels {
		pr := panelResult{Panel: p}
		for _, t := range p.Targets {
			if t.Hide || t.Expr == "" {
				continue
			}
			expr, err := b.interpolate(t.Expr)
			if err != nil {
				return pageView{}, fmt.Errorf("panel %d %q, query %s: %w", p.ID, p.Title, t.RefID, err)
			}
			ss, err := prom.queryRange(ctx, rangeQuery{Expr: expr, Start: c.start, End: c.end, Step: c.step})
			if err != nil {
				return pageView{}, fmt.Errorf("panel %d %q, query %s: %w", p.ID, p.Title, t.RefID, err)
			}
			for _, s := range ss {
				pr.Series = append(pr.Series, namedSeries{Name: legend(t.LegendFormat, s.Labels), series: s})
			}
		}
		in.Panels = append(in.Panels, pr)
	}
	return buildPage(in), nil
}

// oneLine folds an error onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
