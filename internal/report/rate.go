package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/words"
)

// ChartRate is the kind of the response time against RTT at a fixed offered rate
// (Report.AtRate): one panel per transaction type, its p50, p90 and p99, and the saturation
// RTT as vertical lines.
const ChartRate = "response-at-rate"

// Stats of a ChartRate: the percentiles, and the saturation RTT measured (the first RTT
// whose runs were overload points) and modelled (r* = (N/λ − s)/R), drawn as vertical lines.
const (
	StatP90             = "p90"
	StatSaturation      = "saturation"
	StatModelSaturation = "model saturation"
)

// ratePercentiles are the stats a ChartRate draws, with their reading of a RateType.
var ratePercentiles = []struct {
	stat string
	get  func(analysis.RateType) time.Duration
}{
	{"p50", func(t analysis.RateType) time.Duration { return t.P50 }},
	{StatP90, func(t analysis.RateType) time.Duration { return t.P90 }},
	{"p99", func(t analysis.RateType) time.Duration { return t.P99 }},
}

// rateTitle names a RateSeries for people: "Response time against RTT at 500 per second
// (poisson arrivals, 16 terminals)", and its series when there are several.
func rateTitle(rs *analysis.RateSeries, several bool) string {
	t := fmt.Sprintf("Response time against RTT at %s per second (%s arrivals, %s)", spec.FormatRate(rs.Rate), rs.Arrival, words.Count(rs.Terminals, "terminal"))
	if several {
		t += ", " + rs.Series
	}
	return t
}

// rateCharts lays out one ChartRate per RateSeries.
func (r *Report) rateCharts() []Chart {
	var out []Chart
	for i := range r.AtRate {
		rs := &r.AtRate[i]
		if len(rs.Points) == 0 {
			continue
		}
		x := rttAxis(rs.Points, rs, r.Options.XScale)
		ch := Chart{ID: fmt.Sprintf("%s-%d", ChartRate, i+1), Kind: ChartRate, Title: rateTitle(rs, len(r.AtRate) > 1),
			X: x, Lines: true}
		var types []string
		for _, p := range rs.Points {
			for _, t := range p.Types {
				if !slices.Contains(types, t.Type) {
					types = append(types, t.Type)
				}
			}
		}
		types = txOrder(types)
		var all []float64
		for _, typ := range types {
			pn := Panel{Title: typ, TxType: typ}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, pc := range ratePercentiles {
				s := Series{Name: pc.stat, Group: pc.stat, Stat: pc.stat}
				for _, p := range rs.Points {
					for _, t := range p.Types {
						if t.Type != typ {
							continue
						}
						y := float64(pc.get(t)) / float64(time.Millisecond)
						s.Points = append(s.Points, Point{Level: p.Level, X: rttMs(p), Y: y, N: p.Runs})
						lo, hi = math.Min(lo, y), math.Max(hi, y)
						all = append(all, y)
					}
				}
				if len(s.Points) > 0 {
					pn.Series = append(pn.Series, s)
				}
			}
			if math.IsInf(lo, 0) {
				continue
			}
			pn.YMin, pn.YMax = lo, hi
			if rs.Saturated {
				pn.Series = append(pn.Series, vline(StatSaturation, float64(rs.Saturation)/float64(time.Millisecond), lo, hi))
			}
			if m, ok := drawnSaturation(rs); ok {
				pn.Series = append(pn.Series, vline(StatModelSaturation, m, lo, hi))
			}
			ch.Panels = append(ch.Panels, pn)
		}
		if len(ch.Panels) == 0 {
			continue
		}
		ch.Cols = panelCols(len(ch.Panels))
		ch.Y = valueAxis("response time (ms)", all, r.Options.YScale)
		ch.Note = rateNote(rs, ch)
		out = append(out, ch)
	}
	return out
}

// rttMs is a point's X: the achieved RTT in ms, 0 where none was asked for.
func rttMs(p analysis.RatePoint) float64 {
	if v, ok := numericLevel(results.FactorRTT, p.Level); ok && v == 0 {
		return 0
	}
	return float64(p.RTT) / float64(time.Millisecond)
}

// vline is a vertical line at x from lo to hi: a saturation marker.
func vline(stat string, x, lo, hi float64) Series {
	return Series{Name: stat, Group: stat, Stat: stat, Points: []Point{{X: x, Y: lo}, {X: x, Y: hi}}}
}

// drawnSaturation returns the model's saturation RTT in ms when the chart draws it: when it
// is known and lies within half the measured range beyond the highest RTT (farther out it
// would squeeze the measured points together).
func drawnSaturation(rs *analysis.RateSeries) (float64, bool) {
	if rs.ModelSaturation <= 0 || len(rs.Points) == 0 {
		return 0, false
	}
	m := float64(rs.ModelSaturation) / float64(time.Millisecond)
	top := rttMs(rs.Points[len(rs.Points)-1])
	return m, m <= 1.5*top
}

// isMarker reports whether a series is a vertical marker rather than data: a saturation
// RTT, or where predicted throughput falls by 10 % or half.
func isMarker(s *Series) bool {
	switch s.Stat {
	case StatSaturation, StatModelSaturation, StatFall10, StatFall50, StatDisturbed, StatOperation:
		return true
	}
	return false
}

// rttAxis is the X axis of a ChartRate: the achieved RTT in ms, ticks at the requested
// levels, on the scale the rule (or force) chooses.
func rttAxis(points []analysis.RatePoint, rs *analysis.RateSeries, force string) Axis {
	a := Axis{Key: results.FactorRTT, Label: axisLabel(results.FactorRTT)}
	var data []float64
	var ticks []Tick
	for _, p := range points {
		v, _ := numericLevel(results.FactorRTT, p.Level)
		ticks = append(ticks, Tick{Level: p.Level, Value: v, Label: trimFloat(v)})
		data = append(data, v, rttMs(p))
	}
	if m, ok := drawnSaturation(rs); ok {
		data = append(data, m)
	}
	a.Scale = chooseScale(data, force)
	a.Min, a.Max = slices.Min(data), slices.Max(data)
	if a.Scale == ScaleLog && a.Min <= 0 {
		a.Floor = minPositive(data) / 4
	}
	if crowdedTicks(ticks, a) {
		a.Ticks = niceTicks(a, false)
	} else {
		a.Ticks = ticks
	}
	if a.Scale == ScaleLog {
		a.Label = strings.TrimSuffix(a.Label, ")") + ", log scale)"
	}
	return a
}

// rateNote says how to read a ChartRate.
func rateNote(rs *analysis.RateSeries, ch Chart) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Response time from each transaction's intended start on a schedule of %s arrivals per second (%s), whatever the server did, one panel per transaction type: the median, 90th and 99th percentiles of the pooled distribution of each RTT level's finished runs. ", spec.FormatRate(rs.Rate), rs.Arrival)
	if rs.Saturated {
		fmt.Fprintf(&b, "The solid vertical line marks the measured saturation, RTT %s, the lowest whose runs did not sustain the rate: there and beyond, the points are overload points whose response times measure a backlog that grows through the window. ", rs.SaturationLevel)
	} else {
		b.WriteString("Every RTT level sustained the rate. ")
	}
	if _, ok := drawnSaturation(rs); ok {
		fmt.Fprintf(&b, "The dashed vertical line is the model's saturation RTT r* = (N/λ − s)/R = %s, where %d terminals at %.1f round trips and s = %s per transaction are busy all the time. ",
			spec.FormatDuration(rs.ModelSaturation.Round(time.Microsecond)), rs.Terminals, rs.R, spec.FormatDuration(rs.S.Round(time.Microsecond)))
	}
	b.WriteString(axisNote(ch.X, ch.Y))
	return strings.TrimSpace(b.String())
}

// rateSentence is the headline's sentence about the fixed-rate series: where the offered
// rate stops being sustained as the RTT grows.
func (r *Report) rateSentence() string {
	var parts []string
	for i := range r.AtRate {
		rs := &r.AtRate[i]
		at := fmt.Sprintf("At %s per second", spec.FormatRate(rs.Rate))
		if len(r.AtRate) > 1 {
			at += " (" + rs.Series + ")"
		}
		switch {
		case rs.Saturated && rs.SustainedLevel != "":
			parts = append(parts, fmt.Sprintf("%s the rate holds up to RTT %s and not at %s: from there on the runs are overload points, their response times a growing backlog", at, rs.SustainedLevel, rs.SaturationLevel))
		case rs.Saturated:
			parts = append(parts, fmt.Sprintf("%s the rate was not sustained at any RTT measured", at))
		default:
			last := rs.Points[len(rs.Points)-1]
			parts = append(parts, fmt.Sprintf("%s the rate holds at every RTT measured, up to %s", at, last.Level))
		}
		if rs.ModelSaturation > 0 {
			parts[len(parts)-1] += fmt.Sprintf(" (the model saturates at %s)", msText2(rs.ModelSaturation))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + "."
}
