package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/signals"
	"github.com/dblat/dblat/internal/spec"
)

// ChartTimeline is a run's timeline: its throughput and longest stall per sample interval
// over its window, beside what the host, dblat and the server were doing, with the
// stretches that disturbed it (package disturb) between dashed lines.
const ChartTimeline = "timeline"

// StatDisturbed marks a disturbance's start and end on a timeline.
const StatDisturbed = "disturbed"

// StatOperation marks the start and end of the operation dblat started during a run's
// window (results.Operation) on its timeline.
const StatOperation = "operation"

// maxTimelines bounds the timelines a report draws: the disturbed runs first.
const maxTimelines = 8

// timelineRow is the height of one of a timeline's panels, in points.
const timelineRow = 150

// timelines builds the timelines of runs that have samples: every such run when the
// report is of runs alone (only), else the runs that were disturbed, set aside or had an
// operation during their window, most disturbed first, at most maxTimelines.
func (rep *Report) timelines(runs []results.Run, only bool) []Chart {
	var picked []*results.Run
	for i := range runs {
		r := &runs[i]
		if len(r.Samples) == 0 || r.Status != results.StatusFinished {
			continue
		}
		if only || len(r.Disturbances) > 0 || r.SetAside != "" || ranOperation(r) {
			picked = append(picked, r)
		}
	}
	lost := func(r *results.Run) time.Duration {
		var d time.Duration
		for _, x := range r.Disturbances {
			d += x.Lost
		}
		return d
	}
	slices.SortStableFunc(picked, func(a, b *results.Run) int {
		if la, lb := lost(a), lost(b); la != lb {
			return int(lb - la)
		}
		return int(a.ID - b.ID)
	})
	var out []Chart
	for _, r := range picked[:min(len(picked), maxTimelines)] {
		var cell []string
		levels := rep.levelsOf(r)
		for i, f := range rep.Factors {
			cell = append(cell, f.Key+"="+levels[i])
		}
		out = append(out, timeline(r, strings.Join(cell, " ")))
	}
	return out
}

// ranOperation reports whether r started an operation during its window.
func ranOperation(r *results.Run) bool {
	return slices.ContainsFunc(r.Operations, func(o results.Operation) bool { return o.Ran() })
}

// timeline is one run's timeline chart, titled with its cell's levels: panels over the
// window's seconds, one above the other — transactions per second, the longest stall in
// each interval, for a run with an operation during its window the response times (p50 and
// p99 of each interval), and the host's signals (IO and memory pressure, CPU taken by
// other processes, steal, dblat's own stall), each a share in per cent. Solid red lines
// bound the operation, dashed grey ones each disturbance.
func timeline(r *results.Run, cell string) Chart {
	end := r.Summary.Elapsed.Seconds()
	in := func(off time.Duration) bool { return off > 0 && off.Seconds() <= end+0.001 }
	var tps, stall Series
	tps = Series{Name: "transactions per second", Group: "transactions per second", Stat: StatMean}
	stall = Series{Name: "longest stall", Group: "longest stall (no transaction ended)", Stat: StatMean}
	for _, iv := range disturb.WindowIntervals(r) {
		x := iv.To.Seconds()
		tps.Points = append(tps.Points, Point{X: x, Y: round(iv.Rate(), 1)})
		stall.Points = append(stall.Points, Point{X: x, Y: round(float64(iv.Stall)/float64(time.Millisecond), 1)})
	}
	host := hostSeries(r, in)
	panels := []Panel{
		timelinePanel("throughput", "transactions / s", []Series{tps}),
		timelinePanel("stalls", "ms", []Series{stall}),
	}
	if ranOperation(r) {
		panels = append(panels, timelinePanel("response time", "ms", responseSeries(r, in)))
	}
	if len(host) > 0 {
		panels = append(panels, timelinePanel("what else was happening", "% of the time, % of a CPU", host))
	}
	for i := range panels {
		pn := &panels[i]
		for _, d := range r.Disturbances {
			for _, at := range []time.Duration{d.From, d.To} {
				pn.Series = append(pn.Series, vline(StatDisturbed, at.Seconds(), pn.YMin, pn.YMax))
			}
		}
		for _, o := range r.Operations {
			if o.Ran() {
				for _, at := range []time.Duration{o.Started, min(o.Ended, r.Summary.Elapsed)} {
					pn.Series = append(pn.Series, vline(StatOperation, at.Seconds(), pn.YMin, pn.YMax))
				}
			}
		}
	}
	title := fmt.Sprintf("Run %d: its window, second by second", r.ID)
	if cell != "" {
		title = fmt.Sprintf("Run %d (%s): its window, second by second", r.ID, cell)
	}
	note := "Each point is one sample interval of the window: the transactions that ended in it per second, and the longest time in it during which none ended (every terminal waiting at once)."
	if len(host) > 0 {
		note += " Below, what the machine did meanwhile: the share of the time every task waited on the disk (IO pressure full) or on memory, the CPU other processes took and the hypervisor withheld, and the longest time dblat's own process went without a CPU, over the same intervals."
	}
	for _, o := range r.Operations {
		note += " " + operationNote(r, &o)
	}
	for _, d := range r.Disturbances {
		note += fmt.Sprintf(" Between the dashed lines %s took %s: %s.", disturb.Describe(d.Cause), d.Lost.Round(10*time.Millisecond), d.Evidence)
	}
	if r.SetAside != "" {
		note += " The run was set aside: " + r.SetAside + "."
	}
	return Chart{ID: fmt.Sprintf("%s-%d", ChartTimeline, r.ID), Kind: ChartTimeline, Title: title,
		X:     Axis{Label: "seconds into the window", Scale: ScaleLinear, Min: 0, Max: end, Ticks: niceTicks(Axis{Scale: ScaleLinear, Min: 0, Max: end}, true)},
		Lines: true, Cols: 1, Panels: panels, Note: note}
}

// operationNote says what the operation o of run r did, for a timeline's note.
func operationNote(r *results.Run, o *results.Operation) string {
	if !o.Ran() {
		return fmt.Sprintf("The %s asked for %s into the window did not start: %s.", o.Name, spec.FormatDuration(o.At), o.Error)
	}
	end := fmt.Sprintf("to %.1f s", o.Ended.Seconds())
	if o.Ended > r.Summary.Elapsed {
		end = fmt.Sprintf("past the window's end, to %.1f s (the line at the end)", o.Ended.Seconds())
	}
	var how string
	switch o.Outcome {
	case results.OperationDone:
		how = "it finished"
		if o.Detail != "" {
			how += ": " + o.Detail
		}
	case results.OperationCanceled:
		how = "it was canceled: " + o.Error
	default:
		how = "it failed: " + o.Error
	}
	return fmt.Sprintf("Between the solid red lines dblat's %s ran (%s), from %.1f s %s, and %s.", o.Name, o.Tool, o.Started.Seconds(), end, how)
}

// responseSeries are the p50 and p99 service times of each interval of r's window, in ms,
// from its samples of all types.
func responseSeries(r *results.Run, in func(time.Duration) bool) []Series {
	p50 := Series{Name: "p50", Group: "response time", Stat: "p50"}
	p99 := Series{Name: "p99", Group: "response time", Stat: "p99"}
	for _, s := range r.Samples {
		if s.Type != "" || !in(s.Offset) || s.Committed+s.Errors == 0 {
			continue
		}
		x := s.Offset.Seconds()
		p50.Points = append(p50.Points, Point{X: x, Y: round(float64(s.P50Us)/1000, 2)})
		p99.Points = append(p99.Points, Point{X: x, Y: round(float64(s.P99Us)/1000, 2)})
	}
	return []Series{p50, p99}
}

// hostSeries are a timeline's host signals, in per cent, over the window: the series of
// the signals the run has.
func hostSeries(r *results.Run, in func(time.Duration) bool) []Series {
	by := map[string][]results.Signal{}
	for _, s := range r.Signals {
		if in(s.Offset) {
			by[s.Name] = append(by[s.Name], s)
		}
	}
	var out []Series
	add := func(name string, pts []Point) {
		if len(pts) > 0 {
			out = append(out, Series{Name: name, Group: name, Stat: StatMean, Points: pts})
		}
	}
	share := func(name string, scale float64) []Point {
		var pts []Point
		for _, s := range by[name] {
			pts = append(pts, Point{X: s.Offset.Seconds(), Y: round(scale*s.Value, 1)})
		}
		return pts
	}
	add("IO pressure full (%)", share(signals.HostIOFull, 100))
	if slices.ContainsFunc(by[signals.HostMemorySome], func(s results.Signal) bool { return s.Value > 0 }) {
		add("memory pressure some (%)", share(signals.HostMemorySome, 100))
	}
	// Other processes' CPU: the machine's busy CPUs less dblat's and the server's, per
	// interval, where all three were read.
	dblat, server := map[time.Duration]float64{}, map[time.Duration]float64{}
	for _, s := range by[signals.DblatCPU] {
		dblat[s.Offset] = s.Value
	}
	for _, s := range by[signals.ServerCPU] {
		server[s.Offset] = s.Value
	}
	var others []Point
	for _, s := range by[signals.HostBusy] {
		d, ok1 := dblat[s.Offset]
		v, ok2 := server[s.Offset]
		if ok1 && ok2 {
			others = append(others, Point{X: s.Offset.Seconds(), Y: round(100*math.Max(0, s.Value-d-v), 1)})
		}
	}
	add("other processes' CPU (% of a CPU)", others)
	if slices.ContainsFunc(by[signals.HostSteal], func(s results.Signal) bool { return s.Value >= 0.01 }) {
		add("steal (%)", share(signals.HostSteal, 100))
	}
	// dblat's stall watch, as a share of the interval it fell in.
	var st []Point
	for _, s := range by[signals.DblatStall] {
		if s.Span > 0 {
			st = append(st, Point{X: s.Offset.Seconds(), Y: round(100*math.Min(1, s.Value/s.Span.Seconds()), 1)})
		}
	}
	add("dblat without a CPU (% of the interval, its longest)", st)
	return out
}

// timelinePanel is a timeline's panel of series over a value axis of its own, from 0.
func timelinePanel(title, unit string, series []Series) Panel {
	hi := 0.0
	for _, s := range series {
		for _, p := range s.Points {
			hi = max(hi, p.Y)
		}
	}
	if hi == 0 {
		hi = 1
	}
	y := valueAxis(unit, []float64{0, hi}, ScaleLinear)
	y.Min = 0
	return Panel{Title: title, YMin: y.Min, YMax: y.Max, Y: &y, Series: series}
}
