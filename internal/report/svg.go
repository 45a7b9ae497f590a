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

// Chart geometry in points (1/72 in). 720 × 330 pt is a 10-inch-wide chart: it fills the
// 960-pixel column of the HTML at 1:1 and fits a landscape or portrait page when printed.
const (
	chartW       = 720
	chartH       = 330
	legendGap    = 14 // between the plot and its legend
	legendMargin = 8  // right of the legend
	margin       = 8  // around the plot, so no text touches the edge
)

// chartFont is the typeface of every chart: Liberation Sans, which gonum/plot embeds for
// measuring text and the HTML embeds for drawing it (see fontCSS), so that labels are laid
// out with the metrics they are drawn with.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// fontFamily is the family name Liberation Sans declares, which vgsvg writes in each text
// element.
const fontFamily = "Liberation Sans"

// palette holds the series colours: Okabe & Ito's colour-blind-safe set, dark enough to
// read on white, in an order where neighbours differ in lightness too.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
	color.RGBA{0x99, 0x99, 0x99, 0xff}, // grey
}

// statDashes gives each statistic its line style: means and medians solid, tails dashed.
var statDashes = map[string][]vg.Length{
	"mean": nil,
	"p50":  nil,
	"p90":  {vg.Points(6), vg.Points(3)},
	"p99":  {vg.Points(2), vg.Points(2)},
}

// statGlyphs marks each percentile where no line joins the points (categories on X).
var statGlyphs = map[string]draw.GlyphDrawer{
	"p50": draw.CircleGlyph{}, "p90": draw.TriangleGlyph{}, "p99": draw.SquareGlyph{},
}

// glyphs mark the groups of a chart, in the order of palette.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

// renderSVG draws ch with gonum/plot and returns it as an SVG element to inline in HTML
// (the XML prolog and generator comment removed, role and aria-label added).
func renderSVG(ch *Chart) (string, error) {
	p := plot.New()
	setFonts(p)
	p.Title.Text = ch.Title
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = ch.X.Label
	p.Y.Label.Text = ch.Y.Label
	p.X.Padding, p.Y.Padding = 0, 0 // the axes meet at the corner

	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color = color.Gray{Y: 0xdd}
	p.Add(grid)

	// A log axis is drawn as log10 of the data on a linear axis with ticks at 1-2-5 values:
	// gonum's LogScale places the rotated Y label's glyph box at the data midpoint, which on
	// a log axis sits near the top and squeezes the plot.
	ty := func(y float64) float64 { return y }
	if ch.Y.Scale == ScaleLog {
		ty = func(y float64) float64 { return math.Log10(math.Max(y, 1e-9)) }
	}

	groups := map[string]int{}
	for _, s := range ch.Series {
		if _, ok := groups[s.Group]; !ok {
			groups[s.Group] = len(groups)
		}
	}
	// Points-only charts (categories on X) set the groups side by side around each level so
	// that their whiskers do not hide each other: 0.5 of a category width is shared.
	dodge := func(string) float64 { return 0 }
	if !ch.Lines && len(groups) > 1 && ch.X.Scale == ScaleCategorical {
		step := 0.5 / float64(len(groups))
		dodge = func(g string) float64 { return (float64(groups[g]) - float64(len(groups)-1)/2) * step }
	}

	leg := plot.NewLegend()
	leg.TextStyle.Font = font.From(chartFont, 10)
	leg.Top, leg.Left = true, true
	leg.ThumbnailWidth = vg.Points(26)
	leg.Padding = vg.Points(3)

	for _, s := range ch.Series {
		g := groups[s.Group]
		col := palette[g%len(palette)]
		xys := make(plotter.XYs, len(s.Points))
		for i, pt := range s.Points {
			xys[i] = plotter.XY{X: pt.X + dodge(s.Group), Y: ty(pt.Y)}
		}
		var thumbs []plot.Thumbnailer
		if ch.Lines && len(xys) > 0 {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return "", fmt.Errorf("report: chart %s: %w", ch.ID, err)
			}
			l.Color = col
			l.Width = vg.Points(1.5)
			l.Dashes = statDashes[s.Stat]
			p.Add(l)
			thumbs = append(thumbs, l)
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return "", fmt.Errorf("report: chart %s: %w", ch.ID, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: glyphs[g%len(glyphs)]}
		if ch.Kind == ChartPercentiles && !ch.Lines {
			sc.GlyphStyle.Shape = statGlyphs[s.Stat] // no lines to dash: the marker tells the stat
		}
		p.Add(sc)
		thumbs = append(thumbs, sc)

		var errs errorPoints
		for i, pt := range s.Points {
			if pt.CI != nil {
				errs = append(errs, errorPoint{xy: xys[i], low: xys[i].Y - ty(pt.CI.Low), high: ty(pt.CI.High) - xys[i].Y})
			}
		}
		if len(errs) > 0 {
			eb, err := plotter.NewYErrorBars(errs)
			if err != nil {
				return "", fmt.Errorf("report: chart %s: %w", ch.ID, err)
			}
			eb.Color = col
			eb.Width = vg.Points(1)
			eb.CapWidth = vg.Points(6)
			p.Add(eb)
		}
		if ch.Kind != ChartPercentiles {
			leg.Add(s.Name, thumbs...)
		}
	}
	if ch.Kind == ChartPercentiles {
		addStatLegend(&leg, ch, groups)
	}

	setXRange(p, ch.X)
	setYRange(p, ch.Y)

	// The legend sits right of the plot, never over the data: the plot gets what is left.
	c := vgsvg.New(vg.Points(chartW), vg.Points(chartH))
	dc := draw.New(c)
	lr := leg.Rectangle(dc)
	legendW := lr.Max.X - lr.Min.X
	legH := lr.Max.Y - lr.Min.Y
	h := vg.Length(chartH)
	if need := legH + vg.Points(60); need > h {
		// Many series: grow the chart rather than let the legend run off it.
		h = need
		c = vgsvg.New(vg.Points(chartW), h)
		dc = draw.New(c)
	}
	p.Draw(draw.Crop(dc, margin, -(legendW + legendGap + legendMargin), margin, -margin))
	titleH := p.Title.TextStyle.Height(p.Title.Text) + p.Title.Padding
	leg.Draw(draw.Crop(dc, vg.Points(chartW)-legendW-legendMargin, -legendMargin, 0, -(margin + titleH + vg.Points(4))))

	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("report: chart %s: %w", ch.ID, err)
	}
	return inlineSVG(buf.String(), ch.Title), nil
}

// inlineSVG strips what only a stand-alone SVG file needs and labels the element.
func inlineSVG(svg, title string) string {
	if i := strings.Index(svg, "<svg"); i >= 0 {
		svg = svg[i:]
	}
	label := html.EscapeString(title)
	return strings.Replace(svg, "<svg ", `<svg role="img" aria-label="`+label+`" `, 1)
}

func setFonts(p *plot.Plot) {
	p.Title.TextStyle.Font = font.From(chartFont, 13)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(chartFont, 11)
		a.Tick.Label.Font = font.From(chartFont, 10)
	}
}

func setXRange(p *plot.Plot, a Axis) {
	if a.Scale == ScaleCategorical {
		p.X.Min, p.X.Max = -0.5, float64(len(a.Ticks))-0.5
	} else {
		pad := (a.Max - a.Min) * 0.04
		p.X.Min, p.X.Max = a.Min-pad, a.Max+pad
	}
	// One labelled tick per level unless there are too many to read (then gonum's own).
	if len(a.Ticks) <= 25 || a.Scale == ScaleCategorical {
		ticks := make(plot.ConstantTicks, len(a.Ticks))
		for i, t := range a.Ticks {
			ticks[i] = plot.Tick{Value: t.Value, Label: t.Label}
		}
		p.X.Tick.Marker = ticks
	}
}

func setYRange(p *plot.Plot, a Axis) {
	if a.Scale == ScaleLog {
		p.Y.Tick.Marker = logTicks{}
		lo, hi := a.Min, a.Max
		if lo <= 0 {
			lo = hi / 1000
		}
		// Start and end on a labelled tick (1, 2 or 5 × 10ⁿ) so that both ends read.
		p.Y.Min, p.Y.Max = math.Log10(nice125(lo/1.1, false)), math.Log10(nice125(hi*1.1, true))
		return
	}
	p.Y.Min = 0
	p.Y.Max = a.Max * 1.08
	if p.Y.Max <= 0 {
		p.Y.Max = 1
	}
}

// nice125 returns the largest 1, 2 or 5 × 10ⁿ at most v, or with up the smallest at least v.
func nice125(v float64, up bool) float64 {
	e := math.Floor(math.Log10(v))
	steps := []float64{1, 2, 5, 10}
	if up {
		for _, m := range steps {
			if x := m * math.Pow(10, e); x >= v*(1-1e-9) {
				return x
			}
		}
	}
	for i := len(steps) - 2; i >= 0; i-- {
		if x := steps[i] * math.Pow(10, e); x <= v*(1+1e-9) {
			return x
		}
	}
	return math.Pow(10, e)
}

// addStatLegend gives a percentile chart a legend in two parts: one entry per group (its
// colour and marker) and one per statistic (its line style), so that three percentiles of
// N series take N + 3 lines instead of 3N.
func addStatLegend(leg *plot.Legend, ch *Chart, groups map[string]int) {
	ink := color.Color(color.Black)
	if len(groups) == 1 {
		ink = palette[0]
	}
	seenGroup, seenStat := map[string]bool{}, map[string]bool{}
	var stats []string
	for _, s := range ch.Series {
		if !seenStat[s.Stat] {
			seenStat[s.Stat] = true
			stats = append(stats, s.Stat)
		}
		if s.Group == "" || seenGroup[s.Group] {
			continue
		}
		seenGroup[s.Group] = true
		g := groups[s.Group]
		col := palette[g%len(palette)]
		if ch.Lines {
			leg.Add(s.Group,
				legendLine{draw.LineStyle{Color: col, Width: vg.Points(1.5)}},
				legendGlyph{draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: glyphs[g%len(glyphs)]}})
		} else {
			leg.Add(s.Group, legendGlyph{draw.GlyphStyle{Color: col, Radius: vg.Points(4), Shape: draw.BoxGlyph{}}})
		}
	}
	for _, st := range stats {
		if ch.Lines {
			leg.Add(st, legendLine{draw.LineStyle{Color: ink, Width: vg.Points(1.5), Dashes: statDashes[st]}})
		} else {
			leg.Add(st, legendGlyph{draw.GlyphStyle{Color: ink, Radius: vg.Points(3), Shape: statGlyphs[st]}})
		}
	}
}

// legendLine and legendGlyph draw legend thumbnails that stand for no single series.
type legendLine struct{ draw.LineStyle }

func (l legendLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.LineStyle, c.Min.X, y, c.Max.X, y)
}

type legendGlyph struct{ draw.GlyphStyle }

func (g legendGlyph) Thumbnail(c *draw.Canvas) { c.DrawGlyph(g.GlyphStyle, c.Center()) }

// logTicks marks an axis of log10 values: labels at 1, 2 and 5 of every decade it covers
// (gonum's LogTicks labels powers of ten only, too few when the data span two decades),
// unlabelled ticks at the other integers.
type logTicks struct{}

func (logTicks) Ticks(lmin, lmax float64) []plot.Tick {
	min, max := math.Pow(10, lmin)*(1-1e-9), math.Pow(10, lmax)*(1+1e-9)
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		dec := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := float64(m) * dec
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: math.Log10(v)}
			if m == 1 || m == 2 || m == 5 {
				t.Label = trimFloat(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// trimFloat writes a tick value without trailing zeros or float noise (0.30000000000000004).
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.6f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// errorPoint is a point with its asymmetric Y error for plotter.YErrorBars.
type errorPoint struct {
	xy        plotter.XY
	low, high float64
}

type errorPoints []errorPoint

func (e errorPoints) Len() int                        { return len(e) }
func (e errorPoints) XY(i int) (float64, float64)     { return e[i].xy.X, e[i].xy.Y }
func (e errorPoints) YError(i int) (float64, float64) { return e[i].low, e[i].high }
