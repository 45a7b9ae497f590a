package report

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart geometry in points (1/72 in). 720 pt is a 10-inch-wide figure: it fills the
// 960-pixel column of the HTML at 1:1 and fits a landscape or portrait page when printed.
// One row of panels is 330 pt tall (440 px: with the page's heading it fits a 1280 × 800
// screen), an observation's prediction 270 pt (360 px: its title and verdict above it fit
// the same screen); a figure of several rows gives each row of throughput panels 210 pt and each row
// of response-time panels 120 pt (room for four labelled ticks in 10-point type).
const (
	chartW        = 720
	chartH        = 330
	predictedH    = 270
	throughputRow = 210
	percentileRow = 120
	legendGap     = 14 // between the panels and the legend
	margin        = 8  // around everything, so no text touches the edge
	panelGap      = 16 // between panels, room for a tick label's overhang
	minorDecade   = 60 // the least length of a decade with minor ticks: 8 ticks 7 pt apart
)

// chartFont is the typeface of every chart: Liberation Sans, which gonum/plot embeds for
// measuring text and the HTML embeds for drawing it (see fontCSS), so that labels are laid
// out with the metrics they are drawn with.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// fontFamily is the family name Liberation Sans declares, which vgsvg writes in each text
// element.
const fontFamily = "Liberation Sans"

// palette holds the series colours: Okabe & Ito's colour-blind-safe set, in an order where
// neighbours differ in lightness too, its two lightest (sky blue, orange) last but one so
// that up to six groups print dark enough on white.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0x99, 0x99, 0x99, 0xff}, // grey
}

// statDashes gives each statistic its line style: means and medians solid, tails and the
// model dashed.
var statDashes = map[string][]vg.Length{
	StatMean:  nil,
	"p50":     nil,
	"p99":     {vg.Points(5), vg.Points(3)},
	StatModel: {vg.Points(2), vg.Points(2)},
	StatP90:   {vg.Points(1.5), vg.Points(2)},
	// The model's saturation dashed like the model, the measured one solid.
	StatModelSaturation: {vg.Points(2), vg.Points(2)},
	// Where predicted throughput has fallen by 10 % (dotted) and by half (dashed).
	StatFall10: {vg.Points(1.5), vg.Points(2.5)},
	StatFall50: {vg.Points(5), vg.Points(3)},
	// A disturbance's start and end on a run's timeline.
	StatDisturbed: {vg.Points(4), vg.Points(2)},
	// The start and end of the operation dblat started during a run's window: solid.
	StatOperation: nil,
}

// statGlyphs marks each percentile where no line joins the points (categories on X).
var statGlyphs = map[string]draw.GlyphDrawer{
	"p50": draw.CircleGlyph{}, "p99": draw.SquareGlyph{},
}

// glyphs mark the groups of a chart, in the order of palette, so that series differ in
// shape as well as colour (legible in black-and-white print).
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

// textStyle is a chart text style of the given size.
func textStyle(size float64) draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: font.From(chartFont, vg.Length(size)), Handler: plot.DefaultTextHandler}
}

// renderSVG draws ch with gonum/plot and returns it as an SVG element to inline in HTML
// (the XML prolog and generator comment removed, role and aria-label added). A figure is
// its title at the top, the Y label left of and the X label below its panels, which share
// them, and one legend right of the panels.
func renderSVG(ch *Chart) (string, error) {
	groups := map[string]int{}
	models := false
	markers := map[string]bool{}
	for _, pn := range ch.Panels {
		for _, s := range pn.Series {
			if s.Stat == StatModel {
				models = true
				continue
			}
			if isMarker(&s) {
				markers[s.Stat] = true
				continue
			}
			if _, ok := groups[s.Group]; !ok {
				groups[s.Group] = len(groups)
			}
		}
	}
	cols := max(ch.Cols, 1)
	rows := (len(ch.Panels) + cols - 1) / cols
	h := vg.Length(chartH)
	switch {
	case ch.Kind == ChartPredicted:
		h = predictedH
	case ch.Kind == ChartTimeline:
		h = vg.Length(60 + rows*timelineRow)
	case ch.Kind == ChartPercentiles:
		h = vg.Length(44 + rows*percentileRow)
	case rows > 1:
		h = vg.Length(60 + rows*throughputRow)
	}

	leg := legend(ch, groups, models, markers)
	measure := draw.New(vgsvg.New(vg.Points(chartW), h))
	lr := leg.Rectangle(measure)
	legendW, legendH := lr.Max.X-lr.Min.X, lr.Max.Y-lr.Min.Y
	titleStyle := textStyle(13)
	titleH := titleStyle.Height(ch.Title) + vg.Points(8)
	if need := margin + titleH + legendH + margin; need > h {
		h = need // many series: grow the figure rather than let the legend run off it
	}
	c := vgsvg.New(vg.Points(chartW), h)
	dc := draw.New(c)

	// Title, top left.
	ts := titleStyle
	ts.YAlign = draw.YTop
	dc.FillText(ts, vg.Point{X: margin, Y: h - margin}, ch.Title)

	// Shared axis labels.
	labelStyle := textStyle(11)
	area := draw.Crop(dc, margin, -(legendW + legendGap + margin), margin, -(margin + titleH))
	if ch.X.Label != "" {
		xs := labelStyle
		xs.XAlign, xs.YAlign = draw.XCenter, draw.YBottom
		dc.FillText(xs, vg.Point{X: (area.Min.X + area.Max.X) / 2, Y: area.Min.Y}, ch.X.Label)
		area = draw.Crop(area, 0, 0, labelStyle.Height(ch.X.Label)+vg.Points(4), 0)
	}
	if ch.Y.Label != "" {
		ys := labelStyle
		ys.Rotation = math.Pi / 2
		ys.XAlign, ys.YAlign = draw.XCenter, draw.YTop
		dc.FillText(ys, vg.Point{X: area.Min.X, Y: (area.Min.Y + area.Max.Y) / 2}, ch.Y.Label)
		area = draw.Crop(area, labelStyle.Height(ch.Y.Label)+vg.Points(4), 0, 0, 0)
	}

	// Panels, aligned so that their data areas line up.
	plots := make([][]*plot.Plot, rows)
	for j := range plots {
		plots[j] = make([]*plot.Plot, cols)
	}
	tileH := (area.Max.Y - area.Min.Y) / vg.Length(rows)
	tileW := (area.Max.X-area.Min.X)/vg.Length(cols) - 60 // less the Y ticks' labels
	for i := range ch.Panels {
		p, err := panelPlot(ch, &ch.Panels[i], groups, tileW, tileH)
		if err != nil {
			return "", fmt.Errorf("report: chart %s: %w", ch.ID, err)
		}
		plots[i/cols][i%cols] = p
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: panelGap, PadY: vg.Points(6)}
	canvases := plot.Align(plots, tiles, area)
	for j := range plots {
		for i, p := range plots[j] {
			if p != nil {
				p.Draw(canvases[j][i])
			}
		}
	}

	// Legend, right of the panels, below the title.
	leg.Draw(draw.Crop(dc, vg.Points(chartW)-legendW-margin, -margin, 0, -(margin + titleH)))

	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("report: chart %s: %w", ch.ID, err)
	}
	return inlineSVG(buf.String(), ch.Title), nil
}

// panelPlot builds one panel's plot: its title, grid, series, whiskers, axes and ticks.
func panelPlot(ch *Chart, pn *Panel, groups map[string]int, panelW, tileH vg.Length) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.Title
	p.Title.TextStyle.Font = font.From(chartFont, 11)
	p.Title.Padding = vg.Points(4)
	p.X.Padding, p.Y.Padding = 0, 0 // the axes meet at the corner
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Tick.Label.Font = font.From(chartFont, 10)
	}

	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color = color.Gray{Y: 0xdd}
	p.Add(grid)

	ya := panelY(ch, pn, tileH)
	if pn.Y != nil {
		p.Y.Label.Text = ya.Label // its own axis, labelled beside it
		p.Y.Label.TextStyle.Font = font.From(chartFont, 11)
	}
	tx, ty := ch.X.position, ya.position

	// Groups are set a little apart around each X so that their whiskers do not hide each
	// other: on a categorical axis within half a category, on a numeric one within 3 % of
	// the axis (5 pt in 600), where it moves no point off its level to the eye.
	dodge := func(string) float64 { return 0 }
	if len(groups) > 1 && hasCI(ch) {
		share := 0.5
		if ch.X.Scale != ScaleCategorical {
			lo, hi := ch.X.position(ch.X.Min), ch.X.position(ch.X.Max)
			if ch.X.Floor > 0 {
				lo = ch.X.position(ch.X.Floor)
			}
			share = 0.03 * (hi - lo)
		}
		step := share / float64(len(groups))
		dodge = func(g string) float64 { return (float64(groups[g]) - float64(len(groups)-1)/2) * step }
	}

	for _, s := range pn.Series {
		g := groups[s.Group]
		col := palette[g%len(palette)]
		xys := make(plotter.XYs, len(s.Points))
		for i, pt := range s.Points {
			xys[i] = plotter.XY{X: tx(pt.X) + dodge(s.Group), Y: ty(pt.Y)}
		}
		if len(xys) == 0 {
			continue
		}
		if s.Stat == StatModel {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width, l.Dashes = col, vg.Points(1.2), statDashes[StatModel]
			p.Add(l)
			continue
		}
		if isMarker(&s) {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width, l.Dashes = markerColor(s.Stat), vg.Points(1.2), statDashes[s.Stat]
			p.Add(l)
			continue
		}
		if ch.Lines {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width, l.Dashes = col, vg.Points(1.5), statDashes[s.Stat]
			p.Add(l)
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: glyphs[g%len(glyphs)]}
		if ch.Kind == ChartPercentiles && !ch.Lines {
			sc.GlyphStyle.Shape = statGlyphs[s.Stat] // no lines to dash: the marker tells the stat
		}
		p.Add(sc)

		var errs errorPoints
		for i, pt := range s.Points {
			if pt.CI != nil {
				errs = append(errs, errorPoint{xy: xys[i], low: xys[i].Y - ty(max(pt.CI.Low, ya.lowest())), high: ty(pt.CI.High) - xys[i].Y})
			}
		}
		if len(errs) > 0 {
			eb, err := plotter.NewYErrorBars(errs)
			if err != nil {
				return nil, err
			}
			eb.Color, eb.Width, eb.CapWidth = col, vg.Points(1), vg.Points(6)
			p.Add(eb)
		}
	}
	setXRange(p, ch.X, panelW)
	setYRange(p, ya, tileH-30)
	return p, nil
}

// panelY returns the Y axis of a panel tileH tall: its own, or the chart's over the
// panel's own range; where panels differ in range (response times per type, a panel's own
// quantity) with ticks thinned to at most one per 22 pt (10-point labels with a gap).
func panelY(ch *Chart, pn *Panel, tileH vg.Length) Axis {
	ya := ch.Y
	ya.Min, ya.Max = pn.YMin, pn.YMax
	switch {
	case pn.Y != nil:
		ya = *pn.Y
	case ch.Kind == ChartPercentiles || ch.Kind == ChartRate:
		ya.Floor = 0
		if ya.Scale == ScaleLog && ya.Min <= 0 {
			ya.Floor = minPositive(seriesYs(pn)) / 4
		}
	default:
		return ya
	}
	ya.Ticks = fitTicks(ya, int(float64(tileH-30)/22))
	return ya
}

// hasCI reports whether any point of the chart has a whisker.
func hasCI(ch *Chart) bool {
	for _, pn := range ch.Panels {
		for _, s := range pn.Series {
			for _, p := range s.Points {
				if p.CI != nil {
					return true
				}
			}
		}
	}
	return false
}

// seriesYs returns every Y of a panel's series.
func seriesYs(pn *Panel) []float64 {
	var ys []float64
	for _, s := range pn.Series {
		for _, pt := range s.Points {
			ys = append(ys, pt.Y)
		}
	}
	return ys
}

// lowest is the smallest value an axis can show: its floor (log, zero present), its first
// positive value (log), or -Inf (linear: whiskers may cross zero and are clipped there).
func (a Axis) lowest() float64 {
	if a.Scale != ScaleLog {
		return math.Inf(-1)
	}
	if a.Floor > 0 {
		return a.Floor
	}
	if len(a.Ticks) > 0 {
		return a.Ticks[0].Value
	}
	return minPositive([]float64{a.Min, a.Max})
}

// fitTicks returns nice ticks for a over its Min and Max, thinned to at most n labels:
// on a log axis the powers of ten only, on a linear one a wider step.
func fitTicks(a Axis, n int) []Tick {
	n = max(n, 2)
	ts := niceTicks(a, a.Scale != ScaleLog)
	if len(ts) <= n {
		return ts
	}
	if a.Scale == ScaleLog {
		if ts := logTicks(a, []float64{1, 5}); len(ts) <= n {
			return ts
		}
		return logTicks(a, []float64{1})
	}
	lo, hi := min(a.Min, 0), a.Max
	step := niceStep((hi - lo) / float64(n-1))
	var out []Tick
	for v := 0.0; v <= math.Ceil(hi/step-1e-9)*step+step*1e-9; v += step {
		out = append(out, Tick{Value: v, Label: fmtNum(v)})
	}
	return out
}

// legend builds a chart's legend: one entry per group (its colour, marker and line), then
// the line styles that stand for a statistic: p50 and p99 on response-time charts, the
// fitted model on throughput charts.
func legend(ch *Chart, groups map[string]int, models bool, markers map[string]bool) plot.Legend {
	leg := plot.NewLegend()
	leg.TextStyle.Font = font.From(chartFont, 10)
	leg.Top, leg.Left = true, true
	leg.ThumbnailWidth = vg.Points(26)
	leg.Padding = vg.Points(3)
	names := make([]string, len(groups))
	for g, i := range groups {
		names[i] = g
	}
	single := len(groups) == 1
	ink := color.Color(color.Black)
	if single {
		ink = palette[0]
	}
	for i, g := range names {
		col := palette[i%len(palette)]
		name := g
		if name == "" {
			if ch.Kind != ChartThroughput {
				continue
			}
			name = "mean ± 95 % CI"
		}
		var thumbs []plot.Thumbnailer
		if ch.Lines {
			thumbs = append(thumbs, legendLine{draw.LineStyle{Color: col, Width: vg.Points(1.5)}})
		}
		shape := glyphs[i%len(glyphs)]
		if ch.Kind == ChartPercentiles && !ch.Lines {
			shape = draw.BoxGlyph{} // the marker tells the statistic: the group is its colour
		}
		thumbs = append(thumbs, legendGlyph{draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: shape}})
		leg.Add(name, thumbs...)
	}
	if ch.Kind == ChartPercentiles {
		for _, st := range percentiles {
			if ch.Lines {
				leg.Add(st.stat, legendLine{draw.LineStyle{Color: ink, Width: vg.Points(1.5), Dashes: statDashes[st.stat]}})
			} else {
				leg.Add(st.stat, legendGlyph{draw.GlyphStyle{Color: ink, Radius: vg.Points(3), Shape: statGlyphs[st.stat]}})
			}
		}
	}
	if models {
		leg.Add("fitted model", legendLine{draw.LineStyle{Color: ink, Width: vg.Points(1.2), Dashes: statDashes[StatModel]}})
	}
	for _, st := range []string{StatSaturation, StatModelSaturation, StatFall10, StatFall50, StatDisturbed, StatOperation} {
		if markers[st] {
			leg.Add(st, legendLine{draw.LineStyle{Color: markerColor(st), Width: vg.Points(1.2), Dashes: statDashes[st]}})
		}
	}
	return leg
}

// markerInk draws the saturation lines: grey, apart from every series' colour.
var markerInk = color.RGBA{0x55, 0x55, 0x55, 0xff}

// operationInk draws an operation's start and end on a timeline: a dark red, apart from the
// grey of a disturbance and from every series' colour.
var operationInk = color.RGBA{0xa0, 0x1c, 0x1c, 0xff}

// markerColor is the colour of a vertical marker of statistic stat.
func markerColor(stat string) color.Color {
	if stat == StatOperation {
		return operationInk
	}
	return markerInk
}

// inlineSVG strips what only a stand-alone SVG file needs and labels the element.
func inlineSVG(svg, title string) string {
	if i := strings.Index(svg, "<svg"); i >= 0 {
		svg = svg[i:]
	}
	label := html.EscapeString(title)
	return strings.Replace(svg, "<svg ", `<svg role="img" aria-label="`+label+`" `, 1)
}

// setXRange sets the X range and ticks: categories at their indexes, numeric axes over the
// data and ticks with 4 % to spare on each side, a log axis from its floor.
func setXRange(p *plot.Plot, a Axis, length vg.Length) {
	if a.Scale == ScaleCategorical {
		p.X.Min, p.X.Max = -0.5, float64(len(a.Ticks))-0.5
	} else {
		lo, hi := a.position(a.Min), a.position(a.Max)
		for _, t := range a.Ticks {
			lo, hi = math.Min(lo, a.position(t.Value)), math.Max(hi, a.position(t.Value))
		}
		pad := (hi - lo) * 0.04
		if pad == 0 {
			pad = 1
		}
		p.X.Min, p.X.Max = lo-pad, hi+pad
	}
	p.X.Tick.Marker = marker(a, length)
}

// setYRange sets the Y range from the first to the last tick, so that both ends are
// labelled; ticks end at or beyond the data (niceTicks).
func setYRange(p *plot.Plot, a Axis, length vg.Length) {
	lo, hi := a.position(a.Min), a.position(a.Max)
	for _, t := range a.Ticks {
		lo, hi = math.Min(lo, a.position(t.Value)), math.Max(hi, a.position(t.Value))
	}
	if hi <= lo {
		hi = lo + 1
	}
	p.Y.Min, p.Y.Max = lo, hi
	p.Y.Tick.Marker = marker(a, length)
}

// marker places an axis' ticks where the axis draws them; a log axis also gets unlabelled
// minor ticks at 2…9 × 10ⁿ where each decade has at least minorDecade of the axis' length
// (closer, they read as a solid bar).
func marker(a Axis, length vg.Length) plot.ConstantTicks {
	var ts plot.ConstantTicks
	labelled := map[float64]bool{}
	for _, t := range a.Ticks {
		ts = append(ts, plot.Tick{Value: a.position(t.Value), Label: t.Label})
		labelled[t.Value] = true
	}
	if a.Scale == ScaleLog {
		lo, hi := minPositive([]float64{a.Min}), a.Max
		for _, t := range a.Ticks {
			if t.Value > 0 && (lo == 0 || t.Value < lo) {
				lo = t.Value
			}
			hi = math.Max(hi, t.Value)
		}
		if lo <= 0 || hi <= lo || math.IsInf(hi, 0) || length/vg.Length(math.Log10(hi/lo)) < minorDecade {
			return ts
		}
		for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
			for m := 1; m < 10; m++ {
				v := float64(m) * math.Pow(10, e)
				if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) && !labelled[v] {
					ts = append(ts, plot.Tick{Value: math.Log10(v)})
				}
			}
		}
	}
	return ts
}

// legendLine and legendGlyph draw legend thumbnails that stand for no single series.
type legendLine struct{ draw.LineStyle }

func (l legendLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.LineStyle, c.Min.X, y, c.Max.X, y)
}

type legendGlyph struct{ draw.GlyphStyle }

func (g legendGlyph) Thumbnail(c *draw.Canvas) { c.DrawGlyph(g.GlyphStyle, c.Center()) }

// errorPoint is a point with its asymmetric Y error for plotter.YErrorBars.
type errorPoint struct {
	xy        plotter.XY
	low, high float64
}

type errorPoints []errorPoint

func (e errorPoints) Len() int                        { return len(e) }
func (e errorPoints) XY(i int) (float64, float64)     { return e[i].xy.X, e[i].xy.Y }
func (e errorPoints) YError(i int) (float64, float64) { return e[i].low, e[i].high }
