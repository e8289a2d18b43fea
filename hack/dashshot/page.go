// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"
)

// Grafana's dashboard grid: 24 columns, rows 30 px high, 8 px between panels.
const (
	gridColumns = 24
	cellHeight  = 30
	cellMargin  = 8
	pagePadding = 16
	headerH     = 84 // title, time range and the variable bar
	panelHeadH  = 32
	panelPad    = 8
	legendRowH  = 20
	axisLabelH  = 20
)

// theme is the palette of Grafana's dark or light theme.
type theme struct {
	Name                                         string
	Page, Panel, Border, Text, Muted, Grid, Chip template.CSS
}

func themeNamed(name string) (theme, error) {
	switch name {
	case "dark":
		return theme{Name: "dark", Page: "#111217", Panel: "#181b1f", Border: "rgba(204,204,220,0.12)",
			Text: "#ccccdc", Muted: "rgba(204,204,220,0.65)", Grid: "rgba(240,250,255,0.09)", Chip: "#22252b"}, nil
	case "light":
		return theme{Name: "light", Page: "#f4f5f5", Panel: "#ffffff", Border: "rgba(36,41,46,0.12)",
			Text: "#24292e", Muted: "rgba(36,41,46,0.75)", Grid: "rgba(0,2,78,0.1)", Chip: "#ffffff"}, nil
	}
	return theme{}, fmt.Errorf("--theme %q: want dark or light", name)
}

// panelResult is what the queries of one panel returned, each series named by its legend.
type panelResult struct {
	Panel  panel
	Series []namedSeries
}

type namedSeries struct {
	Name string
	series
}

// pageInput is everything the page shows.
type pageInput struct {
	Title      string
	Vars       []varChip
	Start, End time.Time
	Step       time.Duration
	Width      int
	Theme      theme
	Panels     []panelResult
}

type varChip struct{ Label, Value string }

// The page's view model: every position and size in pixels, computed here so the template only
// prints.
type (
	pageView struct {
		Title, Range, Note string
		Vars               []varChip
		Theme              theme
		Width, Height      int
		Panels             []panelView
	}
	panelView struct {
		Title                    string
		Left, Top, Width, Height int
		Row                      bool
		Message                  string // "No data", or why the panel is not drawn
		Plot                     *plotView
		Stats                    []statView
	}
	plotView struct {
		Width, Height int
		Grid          []gridLine
		YLabels       []axisLabel
		XLabels       []axisLabel
		Lines         []lineView
		Legend        []legendItem
		LegendHeight  int
	}
	gridLine  struct{ X1, Y1, X2, Y2 float64 }
	axisLabel struct {
		X, Y float64
		Text string
	}
	lineView struct {
		Color, Path string
		Dots        [][2]float64
	}
	legendItem struct{ Color, Name string }
	statView   struct{ Color, Name, Value string }
)

// panelBox is a panel's place on the page from its gridPos.
func panelBox(g gridPos, pageWidth int) (left, top, width, height int) {
	colW := float64(pageWidth-2*pagePadding-(gridColumns-1)*cellMargin) / gridColumns
	left = pagePadding + int(math.Round(float64(g.X)*(colW+cellMargin)))
	width = int(math.Round(float64(g.W)*colW + float64(max(g.W-1, 0))*cellMargin))
	top = headerH + g.Y*(cellHeight+cellMargin)
	height = g.H*cellHeight + max(g.H-1, 0)*cellMargin
	return left, top, width, height
}

// buildPage lays the panels out on the page and draws each one.
func buildPage(in pageInput) pageView {
	v := pageView{
		Title: in.Title, Vars: in.Vars, Theme: in.Theme, Width: in.Width,
		Range: fmt.Sprintf("%s to %s UTC, step %s", in.Start.UTC().Format("2006-01-02 15:04:05"),
			in.End.UTC().Format("2006-01-02 15:04:05"), in.Step),
		Note: "drawn by hack/dashshot from Prometheus query_range",
	}
	bottom := 0
	for _, pr := range in.Panels {
		p := pr.Panel
		pv := panelView{Title: p.Title}
		pv.Left, pv.Top, pv.Width, pv.Height = panelBox(p.GridPos, in.Width)
		if p.Type == "row" {
			pv.Row, pv.Height = true, cellHeight
		}
		bottom = max(bottom, pv.Top+pv.Height)
		bodyW, bodyH := pv.Width-2*panelPad, pv.Height-panelHeadH-panelPad
		switch {
		case pv.Row:
		case p.Type != "timeseries" && p.Type != "graph" && p.Type != "stat":
			pv.Message = fmt.Sprintf("panel type %q is not drawn by dashshot", p.Type)
		case !hasSamples(pr.Series):
			pv.Message = "No data"
		case p.Type == "stat":
			pv.Stats = stats(pr.Series, p.FieldConfig.Defaults.Unit)
		default:
			pv.Plot = plot(pr, in.Start, in.End, in.Step, bodyW, bodyH)
		}
		v.Panels = append(v.Panels, pv)
	}
	v.Height = bottom + pagePadding
	return v
}

func hasSamples(ss []namedSeries) bool {
	return slices.ContainsFunc(ss, func(s namedSeries) bool { return len(s.Samples) > 0 })
}

// stats is a stat panel's numbers: each series' last value.
func stats(ss []namedSeries, unit string) []statView {
	var out []statView
	for i, s := range ss {
		if len(s.Samples) == 0 {
			continue
		}
		out = append(out, statView{Color: palette[i%len(palette)], Name: s.Name,
			Value: formatValue(unit, s.Samples[len(s.Samples)-1].V)})
	}
	return out
}

// plot draws a time-series panel's body, w × h pixels: the legend below (as many rows as its
// entries need, at most half the body), the y axis with the unit's labels on the left, the time
// axis below the plot.
func plot(pr panelResult, start, end time.Time, step time.Duration, w, h int) *plotView {
	pv := &plotView{Width: w}
	var plotted []series
	for i, s := range pr.Series {
		if len(s.Samples) == 0 {
			continue
		}
		pv.Legend = append(pv.Legend, legendItem{Color: palette[i%len(palette)], Name: s.Name})
		plotted = append(plotted, s.series)
	}
	pv.LegendHeight = min(legendRows(pv.Legend, w), max((h/2)/legendRowH, 1)) * legendRowH
	pv.Height = h - pv.LegendHeight
	unit := pr.Panel.FieldConfig.Defaults
	lo, hi := valueRange(plotted, unit.Min, unit.Max)
	plotH := float64(pv.Height - axisLabelH - 6)
	tu := tickUnit(unit.Unit, max(math.Abs(lo), math.Abs(hi)))
	ticks, lo, hi := niceTicks(lo/tu, hi/tu, max(int(plotH/40), 2))
	lo, hi = lo*tu, hi*tu
	labels := make([]string, len(ticks))
	labelW := 0.0
	for i, t := range ticks {
		ticks[i] = t * tu
		labels[i] = formatValue(unit.Unit, ticks[i])
		labelW = max(labelW, textWidth(labels[i]))
	}
	sc := scale{start: start, end: end, lo: lo, hi: hi, x0: math.Ceil(labelW) + 10, y0: 6, h: plotH}
	sc.w = float64(w) - sc.x0 - 4
	for i, t := range ticks {
		y := round1(sc.y(t))
		pv.Grid = append(pv.Grid, gridLine{X1: sc.x0, Y1: y, X2: sc.x0 + sc.w, Y2: y})
		pv.YLabels = append(pv.YLabels, axisLabel{X: sc.x0 - 6, Y: y + 4, Text: labels[i]})
	}
	times, layout := timeTicks(start, end, max(int(sc.w/90), 2))
	for _, t := range times {
		x := round1(sc.x(t))
		pv.Grid = append(pv.Grid, gridLine{X1: x, Y1: sc.y0, X2: x, Y2: sc.y0 + sc.h})
		text := t.Format(layout)
		half := textWidth(text) / 2 // keep the label inside the panel, as Grafana does at its edges
		lx := round1(min(max(x, sc.x0-6+half), float64(w)-half))
		pv.XLabels = append(pv.XLabels, axisLabel{X: lx, Y: sc.y0 + sc.h + 16, Text: text})
	}
	for i, s := range pr.Series {
		if len(s.Samples) == 0 {
			continue
		}
		path, dots := linePath(sc, s.Samples, step)
		pv.Lines = append(pv.Lines, lineView{Color: palette[i%len(palette)], Path: path, Dots: dots})
	}
	return pv
}

// legendRows is how many rows the legend's entries fill in width w: each entry is its swatch,
// its name and a gap.
func legendRows(items []legendItem, w int) int {
	if len(items) == 0 {
		return 0
	}
	rows, x := 1, 0
	for _, it := range items {
		iw := 14 + 6 + int(math.Ceil(textWidth(it.Name))) + 16
		if x > 0 && x+iw > w {
			rows, x = rows+1, 0
		}
		x += iw
	}
	return rows
}

// textWidth estimates the width of s in the page's 12 px sans-serif (DejaVu Sans, the widest of
// the fonts it names): narrow punctuation, wide letters, and digits and the rest.
func textWidth(s string) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case strings.ContainsRune(" .,:;!|'ijlt()[]", r):
			w += 4.2
		case strings.ContainsRune("%mwMW@", r):
			w += 11.5
		case r >= 'A' && r <= 'Z':
			w += 8.6
		default:
			w += 7.7
		}
	}
	return w
}

//go:embed page.html.tmpl
var pageTemplate string

// renderHTML writes the page.
func renderHTML(v pageView) ([]byte, error) {
	t, err := template.New("page").Parse(pageTemplate)
	if err != nil {
		return nil, fmt.Errorf("page template: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, v); err != nil {
		return nil, fmt.Errorf("render page: %w", err)
	}
	return b.Bytes(), nil
}
