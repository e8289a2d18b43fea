package watch

import (
	"fmt"
	"html/template"
	"io"
	"sync"
	"time"
)

// page geometry of the SVG timeline.
const (
	svgLabel = 300 // width of the lane labels
	svgPlot  = 900 // width of the time axis
	svgRow   = 22
)

type svgRect struct {
	X, Y, W float64
	Fill    string
	Title   string
}

type svgText struct {
	X, Y   float64
	Text   string
	Anchor string
	Class  string
}

type pageData struct {
	Start, End    string
	Intervals     int
	Worst         string
	Slipped       int
	MaxSlip       string
	Width, Height int
	Rects         []svgRect
	Texts         []svgText
	Lines         []svgRect
	Events        []Event
	Dropped       int
	FindingsSeen  []string
}

var statusFill = map[string]string{"ready": "#3a9d5d", "unready": "#e0a526", "down": "#c8352e"}

// WriteHTML writes the timeline as one self-contained HTML page (inline SVG and CSS, no scripts
// or external resources): one lane per member, under it one row per rejected trust cell, then
// the events.
func (t *Timeline) WriteHTML(w io.Writer, sum Summary) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := pageData{Start: fmtTime(t.start), End: fmtTime(t.end), Intervals: sum.Intervals, Worst: string(sum.Worst), Slipped: sum.Slipped,
		MaxSlip: sum.MaxSlip.Round(time.Millisecond).String(), Width: svgLabel + svgPlot + 20, Events: t.events, Dropped: t.dropped}
	if d.Worst == "" {
		d.Worst = "none"
	}
	for _, f := range sortedKeys(sum.Findings) {
		x := sum.Findings[f]
		d.FindingsSeen = append(d.FindingsSeen, fmt.Sprintf("%s [%s] %s: %s", x.Severity, x.ID, x.Member, x.Message))
	}
	span := t.end.Sub(t.start)
	if span <= 0 {
		span = time.Second
	}
	x := func(at time.Time) float64 { return svgLabel + float64(at.Sub(t.start))/float64(span)*svgPlot }
	y := 30.0
	// Time axis: five ticks.
	for i := 0; i <= 4; i++ {
		at := t.start.Add(span * time.Duration(i) / 4)
		d.Texts = append(d.Texts, svgText{X: x(at), Y: 16, Text: at.UTC().Format("15:04:05"), Anchor: "middle", Class: "tick"})
		d.Lines = append(d.Lines, svgRect{X: x(at), Y: 20})
	}
	for _, m := range t.members {
		d.Texts = append(d.Texts, svgText{X: 4, Y: y + 15, Text: m.Name, Class: "member"})
		for _, s := range m.Segs {
			d.Rects = append(d.Rects, svgRect{X: x(s.From), Y: y + 3, W: max(2, x(s.To)-x(s.From)), Fill: statusFill[s.Status],
				Title: fmt.Sprintf("%s %s %s–%s %s", m.Name, s.Status, fmtClock(s.From), fmtClock(s.To), s.Detail)})
		}
		y += svgRow
		for _, c := range t.cells {
			if c.Group != m.Name {
				continue
			}
			d.Texts = append(d.Texts, svgText{X: 16, Y: y + 15, Text: c.Name, Class: "cell"})
			for _, s := range c.Segs {
				d.Rects = append(d.Rects, svgRect{X: x(s.From), Y: y + 6, W: max(2, x(s.To)-x(s.From)), Fill: "#8e44ad",
					Title: fmt.Sprintf("%s rejected: %s %s–%s: %s", c.Name, s.Status, fmtClock(s.From), fmtClock(s.To), s.Detail)})
				d.Texts = append(d.Texts, svgText{X: x(s.From) + 3, Y: y + 16, Text: s.Status, Class: "cause"})
			}
			y += svgRow
		}
	}
	d.Height = int(y) + 10
	for i := range d.Lines {
		d.Lines[i].W = float64(d.Height) // reused as y2
	}
	return pageTmpl().Execute(w, d)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func fmtClock(t time.Time) string { return t.UTC().Format("15:04:05") }

// pageTmpl is parsed when first used, not at every start of every command.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>credwatch watch timeline</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px} table{border-collapse:collapse;font-size:13px} td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
.tick{font-size:11px;fill:#666} .member{font-weight:bold;font-size:13px} .cell{font-size:12px;fill:#555} .cause{font-size:10px;fill:#fff}
.sev-critical,.sev-error{color:#c8352e;font-weight:bold} .sev-warning{color:#b07800} .sev-info{color:#555}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
</style></head><body>
<h1>credwatch watch: {{.Start}} – {{.End}}</h1>
<p id="summary">{{.Intervals}} intervals · worst finding: <b>{{.Worst}}</b> · intervals started late: {{.Slipped}} (max {{.MaxSlip}})</p>
<p class="legend"><span style="background:#3a9d5d"></span>ready<span style="background:#e0a526"></span>unready<span style="background:#c8352e"></span>down<span style="background:#8e44ad"></span>token rejected (signer → verifier, cause)</p>
<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
{{range .Lines}}<line x1="{{.X}}" y1="{{.Y}}" x2="{{.X}}" y2="{{.W}}" stroke="#eee"/>
{{end}}{{range .Rects}}<rect x="{{printf "%.1f" .X}}" y="{{.Y}}" width="{{printf "%.1f" .W}}" height="16" fill="{{.Fill}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Texts}}<text x="{{printf "%.1f" .X}}" y="{{.Y}}" class="{{.Class}}"{{if .Anchor}} text-anchor="{{.Anchor}}"{{end}}>{{.Text}}</text>
{{end}}</svg>
<h2>Findings seen</h2>
{{if .FindingsSeen}}<ul id="findings">{{range .FindingsSeen}}<li>{{.}}</li>{{end}}</ul>{{else}}<p id="findings">none</p>{{end}}
<h2>Events</h2>{{if .Dropped}}<p>{{.Dropped}} older events not kept.</p>{{end}}
<table id="events"><tr><th>time</th><th>severity</th><th>kind</th><th>member</th><th>id</th><th>message</th></tr>
{{range .Events}}<tr><td>{{.Time.UTC.Format "15:04:05"}}</td><td class="sev-{{.Severity}}">{{.Severity}}</td><td>{{.Kind}}</td><td>{{.Member}}</td><td>{{.ID}}</td><td>{{.Message}}</td></tr>
{{end}}</table>
</body></html>
`))
})
