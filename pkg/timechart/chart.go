// SPDX-License-Identifier: Apache-2.0
// Copyright The credwatch Authors.

package timechart

import (
	"math"
	"strconv"
	"time"

	"github.com/credwatch/credwatch/pkg/markup"
)

// Geometry, in SVG user units (pixels at 100 %).
const (
	labelWidth = 300 // the row labels
	plotWidth  = 900 // the time axis
	rowHeight  = 22
	keyHeight  = 20 // one line of the legend
	axisHeight = 30 // the tick labels above the first row
	width      = labelWidth + plotWidth + 20
)

// Shape is how a mark or a legend key is drawn.
type Shape int

// Shapes.
const (
	Box      Shape = iota // a span (legend keys only)
	Circle                // a mark
	Triangle              // a mark of another kind of row
)

// Chart is one SVG chart.
type Chart struct {
	ID     string    // the id of the svg element, if any
	Title  string    // its accessible name (and tooltip)
	From   time.Time // the axis; a To not after From makes it one second long
	To     time.Time
	Rows   []Row
	Legend []Key
}

// Row is one labelled row.
type Row struct {
	Label  string
	Class  string // the CSS class of the label, for the page to style; default "tc-label"
	Indent bool   // the row belongs under the one above it
	Spans  []Span
	Marks  []Mark
}

// Span is a status that lasted from From to To.
type Span struct {
	From, To time.Time
	Colour   string
	Text     string // drawn inside the span, in Ink(Colour)
	Title    string // the tooltip
}

// Mark is a count at an instant, drawn as a shape whose size says how many.
type Mark struct {
	At     time.Time
	Size   float64 // 0 (smallest) to 1 (largest)
	Colour string
	Shape  Shape
	Title  string // the tooltip
}

// Key is one entry of the legend.
type Key struct {
	Shape  Shape
	Colour string
	Label  string
}

// style is the chart's own CSS; the page styles the row labels' classes.
const style = `.tc-tick{font-size:11px;fill:#666}.tc-key,.tc-label{font-size:12px;fill:#222}.tc-span{font-size:10px}`

// WriteSVG writes the chart as one svg element.
func (c *Chart) WriteSVG(w *markup.Writer) {
	keys := layoutLegend(c.Legend)
	top := 0.0
	if len(keys) > 0 {
		top = keys[len(keys)-1].y + keyHeight - 12
	}
	height := top + axisHeight + float64(rowHeight*len(c.Rows)) + 10
	attrs := []string{"xmlns", "http://www.w3.org/2000/svg", "width", num(width), "height", num(height),
		"viewBox", "0 0 " + num(width) + " " + num(height), "role", "img", "aria-label", c.Title}
	if c.ID != "" {
		attrs = append([]string{"id", c.ID}, attrs...)
	}
	w.Open("svg", attrs...)
	w.Raw("\n")
	w.Elem("title", c.Title)
	w.Elem("style", style)
	w.Raw("\n")
	for _, k := range keys {
		k.write(w)
	}
	span := c.To.Sub(c.From)
	if span <= 0 {
		span = time.Second
	}
	x := func(at time.Time) float64 { return labelWidth + float64(at.Sub(c.From))/float64(span)*plotWidth }
	layout := "15:04:05"
	if span >= 24*time.Hour {
		layout = "01-02 15:04"
	}
	w.Elem("text", "time (UTC)", "x", "4", "y", num(top+16), "class", "tc-tick")
	for i := 0; i <= 4; i++ {
		at := c.From.Add(span * time.Duration(i) / 4)
		w.Empty("line", "x1", num(x(at)), "y1", num(top+20), "x2", num(x(at)), "y2", num(height), "stroke", "#eee")
		w.Elem("text", at.UTC().Format(layout), "x", num(x(at)), "y", num(top+16), "text-anchor", "middle", "class", "tc-tick")
		w.Raw("\n")
	}
	y := top + axisHeight
	for _, r := range c.Rows {
		r.write(w, x, y)
		y += rowHeight
	}
	w.Close("svg")
}

func (r *Row) write(w *markup.Writer, x func(time.Time) float64, y float64) {
	class, indent := r.Class, 4.0
	if class == "" {
		class = "tc-label"
	}
	if r.Indent {
		indent = 16
	}
	w.Elem("text", r.Label, "x", num(indent), "y", num(y+15), "class", class)
	w.Raw("\n")
	for _, s := range r.Spans {
		x0 := x(s.From)
		w.Open("rect", "x", num(x0), "y", num(y+3), "width", num(max(2, x(s.To)-x0)), "height", "16", "fill", s.Colour)
		w.Elem("title", s.Title)
		w.Close("rect")
		if s.Text != "" {
			w.Elem("text", s.Text, "x", num(x0+3), "y", num(y+15), "class", "tc-span", "fill", Ink(s.Colour))
		}
		w.Raw("\n")
	}
	for _, m := range r.Marks {
		radius := 3 + 7*min(max(m.Size, 0), 1)
		cx, cy := x(m.At), y+11
		tag, attrs := "circle", []string{"cx", num(cx), "cy", num(cy), "r", num(radius)}
		if m.Shape == Triangle {
			tag, attrs = "polygon", []string{"points", points(cx, cy-radius, cx-radius, cy+0.8*radius, cx+radius, cy+0.8*radius)}
		}
		w.Open(tag, append(attrs, "fill", m.Colour, "fill-opacity", "0.85", "stroke", "#fff", "stroke-width", "0.5")...)
		w.Elem("title", m.Title)
		w.Close(tag)
		w.Raw("\n")
	}
}

// placedKey is a legend key at its place.
type placedKey struct {
	Key
	x, y float64
}

// layoutLegend places the keys left to right, wrapping at the chart's width.
func layoutLegend(keys []Key) []placedKey {
	out := make([]placedKey, 0, len(keys))
	x, y := 4.0, 16.0
	for _, k := range keys {
		w := 16 + 7*float64(len([]rune(k.Label))) + 18
		if x > 4 && x+w > width {
			x, y = 4, y+keyHeight
		}
		out = append(out, placedKey{k, x, y})
		x += w
	}
	return out
}

func (k placedKey) write(w *markup.Writer) {
	cx, cy := k.x+6, k.y-4
	switch k.Shape {
	case Circle:
		w.Empty("circle", "cx", num(cx), "cy", num(cy), "r", "5", "fill", k.Colour)
	case Triangle:
		w.Empty("polygon", "points", points(cx, cy-6, cx-6, cy+5, cx+6, cy+5), "fill", k.Colour)
	default:
		w.Empty("rect", "x", num(k.x), "y", num(k.y-10), "width", "12", "height", "12", "fill", k.Colour)
	}
	w.Elem("text", k.Label, "x", num(k.x+16), "y", num(k.y), "class", "tc-key")
	w.Raw("\n")
}

// num formats a coordinate with at most one decimal.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func points(xy ...float64) string {
	b := make([]byte, 0, 8*len(xy))
	for i, v := range xy {
		if i > 0 {
			sep := byte(',')
			if i%2 == 0 {
				sep = ' '
			}
			b = append(b, sep)
		}
		b = append(b, num(v)...)
	}
	return string(b)
}
