package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
)

// Chart kinds.
const (
	// ChartThroughput plots the mean throughput of each cell with its 95 % interval, and
	// the fitted latency model over it where the model fits.
	ChartThroughput = "throughput"
	// ChartPercentiles plots p50 and p99 response time, one row of panels per transaction
	// type.
	ChartPercentiles = "percentiles"
)

// Axis scales.
const (
	// ScaleLinear places numeric values at their values.
	ScaleLinear = "linear"
	// ScaleLog places numeric values at their logarithm; a zero (RTT 0) is drawn at a
	// labelled "0" one step left of the smallest positive value (Axis.Floor).
	ScaleLog = "log"
	// ScaleCategorical places levels evenly, in order: non-numeric factors, and a study
	// that varies nothing.
	ScaleCategorical = "categorical"
	// ScaleAuto, in Options, lets the report choose linear or log by LogSpan.
	ScaleAuto = "auto"
)

// LogSpan is the rule for automatic log axes: a numeric axis is logarithmic when the
// positive values it shows span more than 10^LogSpan ≈ 31.6 times (1.5 decades). A value
// 1/31.6 of the largest sits within 10 px of zero on a linear axis 330 px tall — the
// points "sit on the floor" and cannot be read or compared, while a log axis gives each
// decade the same room. Below that ratio a linear axis reads more naturally (differences
// are distances). Options.XScale and Options.YScale override the rule.
const LogSpan = 1.5

// Options change how a report draws its charts; the zero value chooses everything itself.
type Options struct {
	// XScale and YScale force every numeric X or Y axis to ScaleLinear or ScaleLog; "" or
	// ScaleAuto choose by LogSpan. Categorical axes stay categorical.
	XScale string `json:"x_scale,omitempty"`
	YScale string `json:"y_scale,omitempty"`
	// Latency chooses the time the response-time figures and tables show: LatencyResponse
	// or LatencyService; "" chooses response time when any run is open-loop, else service
	// time (Report.Latency).
	Latency string `json:"latency,omitempty"`
}

// check rejects unknown scale and latency names.
func (o Options) check() error {
	switch o.Latency {
	case "", LatencyResponse, LatencyService:
	default:
		return fmt.Errorf("report: latency %q: use %s or %s", o.Latency, LatencyResponse, LatencyService)
	}
	for _, s := range []struct{ name, v string }{{"x", o.XScale}, {"y", o.YScale}} {
		switch s.v {
		case "", ScaleAuto, ScaleLinear, ScaleLog:
		default:
			return fmt.Errorf("report: %s scale %q: use %s, %s or %s", s.name, s.v, ScaleAuto, ScaleLinear, ScaleLog)
		}
	}
	return nil
}

// Chart is one figure: one question ("what does added RTT cost?"), answered by one panel or
// by several small multiples that share their axes' labels and scales and one legend.
type Chart struct {
	// ID is stable and unique in a report (an HTML anchor).
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Title string `json:"title"`
	X     Axis   `json:"x"`
	// Y is the value axis. Its Min and Max span every panel of a throughput chart; the
	// panels of a percentile chart have their own range per transaction type (Panel.YMin,
	// YMax) on the same scale.
	Y Axis `json:"y"`
	// Lines is true when a series' points are joined (numeric X); false draws points only
	// (categories have no order to join).
	Lines bool `json:"lines"`
	// Cols is the number of panels per row; panels fill rows left to right.
	Cols   int     `json:"cols"`
	Panels []Panel `json:"panels"`
	// Note says how to read the chart: what a point is, what the whiskers are, the scales.
	Note string `json:"note"`
}

// Panel is one plot of a chart.
type Panel struct {
	// Title names what the panel holds ("4 terminals", "new_order"); "" for a chart's only
	// panel.
	Title string `json:"title,omitempty"`
	// TxType is the transaction type of a ChartPercentiles panel.
	TxType string `json:"tx_type,omitempty"`
	// YMin and YMax bound the Y values of the panel's row (the panels of one transaction
	// type share them) or, for throughput, of the whole chart.
	YMin float64 `json:"y_min"`
	YMax float64 `json:"y_max"`
	// Y, when set, is the panel's own value axis, labelled beside it: for a figure whose
	// panels show different quantities (ChartPredicted: response time beside throughput),
	// whose Chart.Y is then empty. YMin and YMax are its Min and Max.
	Y      *Axis    `json:"y,omitempty"`
	Series []Series `json:"series"`
}

// Axis is one axis of a chart.
type Axis struct {
	// Key is the factor on the X axis ("" when the study varies nothing, and on Y).
	Key string `json:"key,omitempty"`
	// Label is the axis title with its unit.
	Label string `json:"label"`
	Scale string `json:"scale"`
	// Ticks are the labelled positions, in data units (categories: their index).
	Ticks []Tick `json:"ticks,omitempty"`
	// Min and Max bound the data of the axis (data units), zeros included.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Floor is where a log axis draws values ≤ 0, labelled "0": a quarter of the smallest
	// positive value, 0.6 decades left of it. 0 on other scales or without such values.
	Floor float64 `json:"floor,omitempty"`
}

// Tick is one labelled position on an axis. Level is the factor level it stands for, if it
// marks one.
type Tick struct {
	Level string  `json:"level,omitempty"`
	Value float64 `json:"value"`
	Label string  `json:"label"`
}

// Series is one line (or set of points) of a panel.
type Series struct {
	Name string `json:"name"`
	// Group names the combination of factor levels the series belongs to; series of one
	// group share a colour and a marker. Stat is what the points are ("mean", "p50",
	// "p99", or "model" for the fitted latency model drawn as a line); series of one stat
	// share a line style.
	Group  string  `json:"group"`
	Stat   string  `json:"stat"`
	Points []Point `json:"points"`
}

// Stats drawn: the measured mean, percentiles, and the fitted model.
const (
	StatMean  = "mean"
	StatModel = "model"
)

// Point is one cell's value in a series (or one sample of a model curve).
type Point struct {
	// Level is the X factor's level as stored ("" on a model curve); X its position in data
	// units: the achieved RTT in ms on an RTT axis, the level's number on other numeric
	// axes, the category index on a categorical one.
	Level string  `json:"level,omitempty"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	// N is the number of finished repeats behind the point (0 on a model curve).
	N int `json:"n"`
	// CI is the 95 % interval of a mean (nil when N < 2, for percentiles and models).
	CI *Interval `json:"ci95,omitempty"`
}

// plan says how cells are laid out in a family of charts: which factor is on X, whose
// level combinations are lines, and whose are panels of the same figure.
type plan struct {
	x      int   // factor index on X, -1 = none (a single "all runs" level)
	lines  []int // factor indexes whose combinations are series
	panels []int // factor indexes whose combinations are panels
}

// allRuns is the X level of a study that varies nothing.
const allRuns = "all runs"

// plans returns the chart layouts for the report's factors, one figure each:
//   - with RTT: throughput against the achieved RTT; with factors besides RTT and
//     terminals, one line per combination of them (architectures, settings) and one panel
//     per terminals level (seed 000's charts); without, one line per terminals level;
//   - with terminals: throughput against terminals, one line per RTT level, one panel per
//     combination of the other factors ("spinning the data around"); without RTT, one line
//     per combination of the other factors;
//   - with neither: throughput per level of the first factor, one line per combination of
//     the others; with no factor at all, one point for all runs.
//
// The first plan also lays out the response-time figure.
func (r *Report) plans() []plan {
	rtt, term := r.factorIndex(results.FactorRTT), r.factorIndex(results.FactorTerminals)
	others := func(except ...int) []int {
		var out []int
		for i := range r.Factors {
			if !slices.Contains(except, i) {
				out = append(out, i)
			}
		}
		return out
	}
	var ps []plan
	if rtt >= 0 {
		p := plan{x: rtt, lines: others(rtt, term)}
		if term >= 0 {
			if len(p.lines) == 0 {
				p.lines = []int{term}
			} else {
				p.panels = []int{term}
			}
		}
		ps = append(ps, p)
	}
	if term >= 0 {
		if rtt >= 0 {
			ps = append(ps, plan{x: term, lines: []int{rtt}, panels: others(rtt, term)})
		} else {
			ps = append(ps, plan{x: term, lines: others(term)})
		}
	}
	// The link's shape: a figure per varied bandwidth, jitter, loss or profile, the other
	// factors as lines (terminals as panels, as above), so that a study of the network's
	// shape reads along each of its axes.
	for _, key := range shapeAxes {
		x := r.factorIndex(key)
		if x < 0 {
			continue
		}
		p := plan{x: x, lines: others(x, term)}
		if term >= 0 && term != x {
			if len(p.lines) == 0 {
				p.lines = []int{term}
			} else {
				p.panels = []int{term}
			}
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		if len(r.Factors) == 0 {
			ps = append(ps, plan{x: -1})
		} else {
			ps = append(ps, plan{x: 0, lines: others(0)})
		}
	}
	return ps
}

// shapeAxes are the link's fields that get a figure of their own when a study varies them,
// in the order the figures come.
var shapeAxes = []string{"jitter", "bandwidth", "loss", "profile"}

// percentilePlan is the plan the response-time figures follow: against jitter when the
// study varies it (jitter is what widens response-time percentiles), else the first.
func (r *Report) percentilePlan(ps []plan) plan {
	for _, p := range ps {
		if p.x >= 0 && r.Factors[p.x].Key == "jitter" {
			return p
		}
	}
	return ps[0]
}

func (r *Report) factorIndex(key string) int {
	for i, f := range r.Factors {
		if f.Key == key {
			return i
		}
	}
	return -1
}

// cellIdx returns the level index of each factor of c.
func (r *Report) cellIdx(c *Cell) []int {
	idx := make([]int, len(c.Levels))
	for f, l := range c.Levels {
		idx[f] = slices.Index(r.Factors[f].Levels, l)
	}
	return idx
}

// combo is one combination of levels of some factors.
type combo struct {
	key  string // fmt.Sprint of the level indexes
	idx  []int
	name string
}

// combos returns the distinct combinations of the factors fs among cells, in level order.
func (r *Report) combos(fs []int, cells []*Cell) []combo {
	seen := map[string]bool{}
	var out []combo
	for _, c := range cells {
		all := r.cellIdx(c)
		idx := make([]int, len(fs))
		for i, f := range fs {
			idx[i] = all[f]
		}
		k := fmt.Sprint(idx)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, combo{key: k, idx: idx, name: r.comboName(fs, idx)})
	}
	slices.SortFunc(out, func(a, b combo) int { return slices.Compare(a.idx, b.idx) })
	return out
}

func (r *Report) comboName(fs []int, idx []int) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = displayLevel(r.Factors[f].Key, r.Factors[f].Levels[idx[i]])
	}
	return strings.Join(parts, ", ")
}

func (r *Report) comboKey(fs []int, c *Cell) string {
	all := r.cellIdx(c)
	idx := make([]int, len(fs))
	for i, f := range fs {
		idx[i] = all[f]
	}
	return fmt.Sprint(idx)
}

// charts lays out every figure: the throughput figure of each plan, then the response-time
// figure of the first plan (split into figures of at most maxPercentileCols columns).
func (r *Report) charts(fits []analysis.Fit, runs []results.Run) []Chart {
	var measured []*Cell
	for i := range r.Cells {
		if r.Cells[i].Throughput.N > 0 {
			measured = append(measured, &r.Cells[i])
		}
	}
	if len(measured) == 0 {
		return []Chart{}
	}
	out := []Chart{}
	ps := r.plans()
	for _, p := range ps {
		out = append(out, r.throughputChart(p, measured, fits, runs))
	}
	out = append(out, r.percentileCharts(r.percentilePlan(ps), measured)...)
	return append(out, r.rateCharts()...)
}

// xAxis returns the X axis of plan p over the levels its cells have, and each cell's
// position on it. On an RTT axis a cell sits at its achieved RTT (Cell.AchievedRTT, in ms)
// and the ticks mark the requested levels.
func (r *Report) xAxis(p plan, cells []*Cell, force string) (Axis, map[*Cell]float64) {
	pos := map[*Cell]float64{}
	if p.x < 0 {
		for _, c := range cells {
			pos[c] = 0
		}
		return Axis{Label: "", Scale: ScaleCategorical, Ticks: []Tick{{Level: allRuns, Value: 0, Label: allRuns}}}, pos
	}
	f := r.Factors[p.x]
	present := map[int]bool{}
	for _, c := range cells {
		present[r.cellIdx(c)[p.x]] = true
	}
	var levels []string
	for i, l := range f.Levels {
		if present[i] {
			levels = append(levels, l)
		}
	}
	a := Axis{Key: f.Key, Label: axisLabel(f.Key)}
	vals := make([]float64, len(levels))
	numeric := true
	for i, l := range levels {
		v, ok := numericLevel(f.Key, l)
		if !ok {
			numeric = false
			break
		}
		vals[i] = v
	}
	if !numeric || len(levels) < 2 {
		a.Scale = ScaleCategorical
		if f.Key == "bandwidth" && !numeric {
			a.Label = "bandwidth each way" // unlimited among the levels: no unit to place them on
		}
		for i, l := range levels {
			label := l
			if numeric {
				label = trimFloat(vals[i])
			}
			if l == "" {
				label = "(none)"
			}
			a.Ticks = append(a.Ticks, Tick{Level: l, Value: float64(i), Label: label})
		}
		for _, c := range cells {
			pos[c] = float64(slices.Index(levels, c.Levels[p.x]))
		}
		a.Min, a.Max = 0, float64(len(levels)-1)
		return a, pos
	}

	data := slices.Clone(vals)
	for _, c := range cells {
		v, _ := numericLevel(f.Key, c.Levels[p.x])
		if f.Key == results.FactorRTT && v != 0 {
			// The achieved RTT; a cell that asked for none stays at 0, where the
			// calibration measures only its own noise (a few µs, either sign).
			v = float64(c.AchievedRTT) / float64(time.Millisecond)
		}
		pos[c] = v
		data = append(data, v)
	}
	a.Scale = chooseScale(data, force)
	a.Min, a.Max = slices.Min(data), slices.Max(data)
	if a.Scale == ScaleLog && a.Min <= 0 {
		a.Floor = minPositive(data) / 4
	}
	ticks := make([]Tick, len(levels))
	for i, l := range levels {
		ticks[i] = Tick{Level: l, Value: vals[i], Label: trimFloat(vals[i])}
	}
	if crowdedTicks(ticks, a) {
		a.Ticks = niceTicks(a, false)
	} else {
		a.Ticks = ticks
	}
	if a.Scale == ScaleLog {
		a.Label = strings.TrimSuffix(a.Label, ")") + ", log scale)"
	}
	return a, pos
}

// chooseScale applies LogSpan to the positive values in vals, unless force names a scale.
func chooseScale(vals []float64, force string) string {
	switch force {
	case ScaleLinear, ScaleLog:
		if force == ScaleLog && minPositive(vals) == 0 {
			return ScaleLinear // nothing positive to place on a log axis
		}
		return force
	}
	lo, hi := minPositive(vals), 0.0
	for _, v := range vals {
		hi = max(hi, v)
	}
	if lo > 0 && hi/lo > math.Pow(10, LogSpan) {
		return ScaleLog
	}
	return ScaleLinear
}

// minPositive returns the smallest value above zero, or 0 when there is none.
func minPositive(vals []float64) float64 {
	m := 0.0
	for _, v := range vals {
		if v > 0 && (m == 0 || v < m) {
			m = v
		}
	}
	return m
}

// position maps a data value to where an axis draws it: the value on a linear or
// categorical axis, its log10 on a log axis, where values at or below zero (and below
// Floor) are drawn at Floor.
func (a Axis) position(v float64) float64 {
	if a.Scale != ScaleLog {
		return v
	}
	if v > 0 && v >= a.Floor {
		return math.Log10(v)
	}
	if a.Floor > 0 {
		return math.Log10(a.Floor)
	}
	return math.Log10(minPositive([]float64{a.Min, a.Max, 1}) / 4) // nothing at zero expected
}

// crowdedTicks reports whether adjacent ticks would sit closer than 1/25 of the axis'
// drawn span: at 960 px that is 38 px, room for "0.25" in 10-point type with a gap.
func crowdedTicks(ts []Tick, a Axis) bool {
	if len(ts) < 2 {
		return false
	}
	lo, hi := a.position(min(a.Min, ts[0].Value)), a.position(max(a.Max, ts[len(ts)-1].Value))
	if a.Scale == ScaleLog && a.Floor > 0 {
		lo = a.position(a.Floor)
	}
	span := hi - lo
	if span <= 0 {
		return true
	}
	for i := 1; i < len(ts); i++ {
		if (a.position(ts[i].Value)-a.position(ts[i-1].Value))/span < 1.0/25 {
			return true
		}
	}
	return false
}

// niceTicks returns readable tick positions for a numeric axis: multiples of 1, 2, 2.5 or
// 5 × 10ⁿ (about six of them) on a linear axis, starting at 0 when fromZero; 1, 2 and 5 ×
// 10ⁿ on a log axis (only the powers of ten beyond three decades), plus "0" at the floor.
func niceTicks(a Axis, fromZero bool) []Tick {
	lo, hi := a.Min, a.Max
	if a.Scale == ScaleLog {
		if lo2, hi2 := logBounds(a); hi2 > 0 && math.Log10(hi2/lo2) > 3 {
			return logTicks(a, []float64{1})
		}
		return logTicks(a, []float64{1, 2, 5})
	}
	if fromZero {
		lo = min(lo, 0)
	}
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	if fromZero {
		hi = math.Ceil(hi/step-1e-9) * step // end on a tick at or above the data
	}
	var ts []Tick
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ts = append(ts, Tick{Value: v, Label: fmtNum(v)})
	}
	return ts
}

// logBounds returns the positive data range of a log axis: from its smallest positive
// value (above the floor) to its largest.
func logBounds(a Axis) (lo, hi float64) {
	lo, hi = a.Min, a.Max
	if a.Floor > 0 {
		lo = a.Floor * 4
	}
	if lo <= 0 {
		lo = hi / 1000
	}
	return lo, hi
}

// logTicks returns ticks at mults × 10ⁿ from the largest such value at or below the data to
// the smallest at or above it, so that both ends of the axis are labelled, plus "0" at the
// floor.
func logTicks(a Axis, mults []float64) []Tick {
	var ts []Tick
	if a.Floor > 0 {
		ts = append(ts, Tick{Value: a.Floor, Label: "0"})
	}
	lo, hi := logBounds(a)
	if hi <= 0 {
		return ts
	}
	var vals []float64
	for e := math.Floor(math.Log10(lo)) - 1; e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range mults {
			vals = append(vals, m*math.Pow(10, e))
		}
	}
	first, last := 0, len(vals)-1
	for i, v := range vals {
		if v <= lo*(1+1e-9) {
			first = i
		}
	}
	for i := len(vals) - 1; i >= 0; i-- {
		if vals[i] >= hi*(1-1e-9) {
			last = i
		}
	}
	for _, v := range vals[first : last+1] {
		ts = append(ts, Tick{Value: v, Label: fmtNum(v)})
	}
	return ts
}

// niceStep returns the smallest 1, 2, 2.5, 5 or 10 × 10ⁿ at least raw.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// valueAxis returns a Y axis over vals, on the scale the rule (or force) chooses, with
// nice ticks: a linear axis starts at 0 and ends on a tick at or above the largest value.
func valueAxis(label string, vals []float64, force string) Axis {
	a := Axis{Label: label, Scale: chooseScale(vals, force)}
	if len(vals) == 0 {
		a.Scale = ScaleLinear
		a.Max = 1
		a.Ticks = niceTicks(a, true)
		return a
	}
	a.Min, a.Max = slices.Min(vals), slices.Max(vals)
	if a.Scale == ScaleLog {
		if a.Min <= 0 {
			a.Floor = minPositive(vals) / 4
		}
		a.Label = strings.TrimSuffix(a.Label, ")") + ", log scale)"
		a.Ticks = niceTicks(a, false)
		return a
	}
	a.Ticks = niceTicks(Axis{Scale: ScaleLinear, Min: min(0, a.Min), Max: a.Max}, true)
	return a
}

// numericLevel returns the position of a level on a numeric axis: RTT and the link's other
// delays (up, down, jitter) in milliseconds, other durations in seconds, bandwidth in
// Mbit/s (unlimited is not a number: a bandwidth axis that has it is categorical), loss in
// per cent, numbers as they are.
func numericLevel(key, level string) (float64, bool) {
	switch key {
	case "bandwidth":
		b, err := spec.ParseBandwidth(level)
		if err != nil || b == 0 {
			return 0, false
		}
		return float64(b) * 8 / 1e6, true
	case "loss":
		p, err := spec.ParseLoss(level)
		return p * 100, err == nil
	}
	if d, err := time.ParseDuration(level); err == nil {
		if key == results.FactorRTT || msAxis[key] {
			return float64(d) / float64(time.Millisecond), true
		}
		return d.Seconds(), true
	}
	if f, err := strconv.ParseFloat(level, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f, true
	}
	return 0, false
}

// chartFamily collects the cells of one plan by panel, line and X level.
type chartFamily struct {
	x      Axis
	pos    map[*Cell]float64 // each cell's X position
	panels []combo
	lines  map[string][]combo // panel key → its lines
	// cells maps panel key → line key → cells in X order.
	cells map[string]map[string][]*Cell
}

func (r *Report) family(p plan, cells []*Cell) chartFamily {
	x, pos := r.xAxis(p, cells, r.Options.XScale)
	fam := chartFamily{x: x, pos: pos, panels: r.combos(p.panels, cells),
		cells: map[string]map[string][]*Cell{}, lines: map[string][]combo{}}
	for _, pc := range fam.panels {
		var in []*Cell
		for _, c := range cells {
			if r.comboKey(p.panels, c) == pc.key {
				in = append(in, c)
			}
		}
		fam.lines[pc.key] = r.combos(p.lines, in)
		byLine := map[string][]*Cell{}
		for _, c := range in { // cells are in level order, so in X order within a line
			lk := r.comboKey(p.lines, c)
			byLine[lk] = append(byLine[lk], c)
		}
		fam.cells[pc.key] = byLine
	}
	return fam
}

// panelCols returns how many panels of n go in a row: up to three side by side, four as
// two by two.
func panelCols(n int) int {
	switch {
	case n <= 3:
		return max(n, 1)
	case n == 4:
		return 2
	}
	return 3
}

func (r *Report) throughputChart(p plan, cells []*Cell, fits []analysis.Fit, runs []results.Run) Chart {
	fam := r.family(p, cells)
	title := r.Metric
	id := ChartThroughput + "-" + idPart(fam.x.Key)
	switch {
	case p.x < 0:
	case r.Factors[p.x].Key == results.FactorRTT:
		title += " vs added RTT"
	default:
		title += " vs " + r.Factors[p.x].Label
	}
	if len(p.lines) > 0 && p.x >= 0 {
		title += ", by " + joinLabels(r, p.lines)
	}
	ch := Chart{ID: id, Kind: ChartThroughput, Title: title, X: fam.x, Lines: fam.x.Scale != ScaleCategorical,
		Cols: panelCols(len(fam.panels))}
	fitBy := map[string]*analysis.Fit{}
	for i := range fits {
		fitBy[fits[i].Series] = &fits[i]
	}
	var ys []float64
	models := 0
	for _, pc := range fam.panels {
		pn := Panel{Title: pc.name}
		for _, lc := range fam.lines[pc.key] {
			name := lc.name
			if name == "" {
				name = "mean ± 95 % CI"
			}
			s := Series{Name: name, Group: lc.name, Stat: StatMean}
			line := fam.cells[pc.key][lc.key]
			for _, c := range line {
				e := c.Throughput
				s.Points = append(s.Points, Point{Level: levelOf(p, c), X: fam.pos[c], Y: e.Mean, N: e.N, CI: e.CI})
				ys = append(ys, e.Mean)
				if e.CI != nil {
					ys = append(ys, e.CI.High)
				}
			}
			pn.Series = append(pn.Series, s)
			if r.isRTT(p.x) && len(line) > 0 {
				if f := fitBy[r.fitSeriesName(line[0])]; f != nil && f.Fits {
					m := r.modelSeries(f, lc.name, line, runs, fam.x)
					if len(m.Points) > 1 {
						pn.Series = append(pn.Series, m)
						models++
					}
				}
			}
		}
		ch.Panels = append(ch.Panels, pn)
	}
	if len(ch.Panels) == 1 {
		ch.Panels[0].Title = ""
	}
	ch.Y = valueAxis(fmt.Sprintf("%s (%s)", r.Metric, metricUnit(r.Metric)), ys, r.Options.YScale)
	for i := range ch.Panels {
		ch.Panels[i].YMin, ch.Panels[i].YMax = ch.Y.Min, ch.Y.Max
	}
	ch.Note = throughputNote(ch, models > 0)
	return ch
}

// isRTT reports whether factor index i is the RTT.
func (r *Report) isRTT(i int) bool { return i >= 0 && r.Factors[i].Key == results.FactorRTT }

// levelOf is c's level of p's X factor ("" when nothing is on X).
func levelOf(p plan, c *Cell) string {
	if p.x < 0 {
		return allRuns
	}
	return c.Levels[p.x]
}

// fitSeriesName names c's series as package analysis names a Fit: every factor but RTT as
// "key=level", joined by ", ", or "all runs".
func (r *Report) fitSeriesName(c *Cell) string {
	var parts []string
	for i, f := range r.Factors {
		if f.Key != results.FactorRTT {
			parts = append(parts, f.Key+"="+c.Levels[i])
		}
	}
	if len(parts) == 0 {
		return allRuns
	}
	return strings.Join(parts, ", ")
}

// modelSamples is the number of points a model curve is drawn with: at 720 pt width, one
// every 12 pt or closer, smooth to the eye.
const modelSamples = 61

// modelSeries draws f's fitted curve from its first to its last RTT, converted from the
// model's completed transactions per second to the report's metric by the series' own
// ratio (mean metric over mean TPS of its finished runs: for NOPM, the share of
// New-Orders in the mix it happened to draw, × 60).
func (r *Report) modelSeries(f *analysis.Fit, group string, line []*Cell, runs []results.Run, x Axis) Series {
	s := Series{Name: group + " model", Group: group, Stat: StatModel}
	ids := map[int64]bool{}
	for _, c := range line {
		for _, id := range c.Finished {
			ids[id] = true
		}
	}
	var m, tps float64
	for i := range runs {
		if ids[runs[i].ID] {
			m += r.metric(&runs[i])
			tps += runs[i].Summary.TPS
		}
	}
	if m <= 0 || tps <= 0 {
		return s
	}
	k := m / tps
	lo, hi := float64(f.Base)/float64(time.Millisecond), float64(f.MaxRTT)/float64(time.Millisecond)
	if v, _ := numericLevel(results.FactorRTT, line[0].Levels[r.factorIndex(results.FactorRTT)]); v == 0 {
		lo = 0 // drawn from the point at 0, as the measured line is
	}
	if hi <= lo {
		return s
	}
	xs := make([]float64, 0, modelSamples+1)
	if x.Scale == ScaleLog {
		a := lo
		if a <= 0 {
			xs = append(xs, lo) // the zero point, drawn at the floor
			a = x.Floor * 4     // the smallest positive value on the axis
		}
		for i := range modelSamples {
			u := float64(i) / (modelSamples - 1)
			xs = append(xs, math.Pow(10, math.Log10(a)+u*(math.Log10(hi)-math.Log10(a))))
		}
	} else {
		for i := range modelSamples {
			xs = append(xs, lo+float64(i)/(modelSamples-1)*(hi-lo))
		}
	}
	for _, v := range xs {
		y := f.Predict(time.Duration(v*float64(time.Millisecond))) * k
		s.Points = append(s.Points, Point{X: round(v, 6), Y: round(y, 4)})
	}
	return s
}

// Percentiles drawn in the response-time charts: the median and the tail. p90 (TPC-C's
// limit) is in the tables and the response-time limits section.
var percentiles = []struct {
	stat string
	get  func(*TxCell) int64
}{
	{"p50", func(t *TxCell) int64 { return t.P50Us }},
	{"p99", func(t *TxCell) int64 { return t.P99Us }},
}

// maxPercentileCols is the most panels a response-time row holds; more columns are split
// into further figures.
const maxPercentileCols = 4

// percentileCharts lays out response time as small multiples: one row per transaction
// type, one column per panel of plan p, the lines of p's groups at p50 and p99.
func (r *Report) percentileCharts(p plan, cells []*Cell) []Chart {
	if len(r.TxTypes) == 0 {
		return nil
	}
	fam := r.family(p, cells)
	subject, axis := "Service time", "service time (ms)"
	if r.Latency == LatencyResponse {
		subject, axis = "Response time from the intended start", "response time (ms)"
	}
	if p.x >= 0 {
		if r.isRTT(p.x) {
			subject += " vs added RTT"
		} else {
			subject += " vs " + r.Factors[p.x].Label
		}
	}
	subject += ", by transaction type"

	// Y values per type, for the row ranges and the scale.
	var all []float64
	rowMin, rowMax := map[string]float64{}, map[string]float64{}
	pooled := true
	type built struct {
		panel Panel
		col   int
	}
	var grid [][]built // [type][panel]
	for _, typ := range r.TxTypes {
		var row []built
		lo, hi := math.Inf(1), math.Inf(-1)
		for ci, pc := range fam.panels {
			pn := Panel{Title: typ, TxType: typ}
			if pc.name != "" {
				pn.Title = typ + " — " + pc.name
			}
			for _, lc := range fam.lines[pc.key] {
				for _, pct := range percentiles {
					name := strings.TrimSpace(lc.name + " " + pct.stat)
					s := Series{Name: name, Group: lc.name, Stat: pct.stat}
					for _, c := range fam.cells[pc.key][lc.key] {
						tx := findTx(c, typ)
						if tx == nil || tx.Committed+tx.Rollbacks == 0 {
							continue
						}
						pooled = pooled && tx.Pooled
						y := float64(pct.get(tx)) / 1000
						s.Points = append(s.Points, Point{Level: levelOf(p, c), X: fam.pos[c], Y: y, N: tx.Runs})
						lo, hi = math.Min(lo, y), math.Max(hi, y)
						all = append(all, y)
					}
					if len(s.Points) > 0 {
						pn.Series = append(pn.Series, s)
					}
				}
			}
			row = append(row, built{pn, ci})
		}
		if !math.IsInf(lo, 0) {
			rowMin[typ], rowMax[typ] = lo, hi
			grid = append(grid, row)
		}
	}
	if len(grid) == 0 {
		return nil
	}
	y := valueAxis(axis, all, r.Options.YScale)
	ncols := len(fam.panels)
	var out []Chart
	for start := 0; start < ncols; start += maxPercentileCols {
		end := min(ncols, start+maxPercentileCols)
		ch := Chart{ID: fmt.Sprintf("%s-%s", ChartPercentiles, idPart(fam.x.Key)), Kind: ChartPercentiles,
			Title: subject, X: fam.x, Y: y, Lines: fam.x.Scale != ScaleCategorical, Cols: end - start}
		if ncols > maxPercentileCols {
			part := start/maxPercentileCols + 1
			ch.ID += "-" + strconv.Itoa(part)
			ch.Title += fmt.Sprintf(" (%d of %d)", part, (ncols+maxPercentileCols-1)/maxPercentileCols)
		}
		for _, row := range grid {
			for _, b := range row[start:end] {
				pn := b.panel
				pn.YMin, pn.YMax = rowMin[pn.TxType], rowMax[pn.TxType]
				ch.Panels = append(ch.Panels, pn)
			}
		}
		ch.Note = percentileNote(ch, pooled, r.Latency == LatencyResponse)
		out = append(out, ch)
	}
	return out
}

func findTx(c *Cell, typ string) *TxCell {
	for i := range c.Tx {
		if c.Tx[i].Type == typ {
			return &c.Tx[i]
		}
	}
	return nil
}

func throughputNote(ch Chart, models bool) string {
	b := strings.Builder{}
	b.WriteString("Each point is the mean of the finished repeats of one cell; whiskers are its 95 % confidence interval (Student's t, n−1 degrees of freedom). ")
	single := false
	for _, pn := range ch.Panels {
		for _, s := range pn.Series {
			for _, p := range s.Points {
				if s.Stat == StatMean && p.N < 2 {
					single = true
				}
			}
		}
	}
	if single {
		b.WriteString("Points from a single run have no interval. ")
	}
	if models {
		b.WriteString("Dashed lines are the fitted latency model min(N/(R·r + s), C) of each series that it fits within 15 %, drawn from its lowest to its highest RTT and converted to the metric by the series' own ratio of metric to transactions per second. ")
	}
	b.WriteString(axisNote(ch.X, ch.Y))
	return strings.TrimSpace(b.String())
}

func percentileNote(ch Chart, pooled, response bool) string {
	b := strings.Builder{}
	if ch.Lines {
		b.WriteString("Solid lines are the median (p50), dashed lines the 99th percentile, one row per transaction type with its own time range. ")
	} else {
		b.WriteString("Filled circles are the median (p50), open squares the 99th percentile, one row per transaction type with its own time range. ")
	}
	if pooled {
		b.WriteString("Percentiles of the pooled distribution: the HDR histograms of a cell's finished repeats are merged, then read (not an average of the runs' percentiles). ")
	} else {
		b.WriteString("Some runs stored no histogram: their cells show the mean of the runs' own percentiles. ")
	}
	if response {
		b.WriteString("Response time from each transaction's intended start, schedule lag and retries included. The 90th percentiles, and the service time and lag apart, are in the transaction tables. ")
	} else {
		b.WriteString("Service time only; waiting for a pooled connection is excluded. The 90th percentiles are in the transaction tables. ")
	}
	b.WriteString(axisNote(ch.X, ch.Y))
	return strings.TrimSpace(b.String())
}

// axisNote explains the axes' scales and the achieved RTT.
func axisNote(x, y Axis) string {
	var b strings.Builder
	if x.Key == results.FactorRTT && x.Scale != ScaleCategorical {
		b.WriteString("X is the RTT the link added as each run measured it (the requested RTT plus the link's mean lateness each way during the window; mean over the cell's runs; 0 where none was requested); ticks mark the requested levels. ")
	}
	if x.Scale == ScaleLog || y.Scale == ScaleLog {
		fmt.Fprintf(&b, "Logarithmic axes where the values span more than %.0f×; ", math.Pow(10, LogSpan))
		if x.Floor > 0 || y.Floor > 0 {
			b.WriteString("zero is drawn at the \"0\" tick, left of or below the logarithmic range; ")
		}
		b.WriteString("equal distances are equal ratios. ")
	}
	return strings.TrimSpace(b.String())
}

// idPart makes s usable in an HTML id.
func idPart(s string) string {
	if s == "" {
		return "all"
	}
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// joinLabels names factors for a title: "terminals", "ServerMode and terminals".
func joinLabels(r *Report, fs []int) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = r.Factors[f].Label
	}
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// factorLabel names a factor for people.
func factorLabel(key string) string {
	switch key {
	case results.FactorRTT:
		return "RTT"
	case results.FactorTerminals, results.FactorConnections, results.FactorWarehouses,
		results.FactorEngine, results.FactorTarget, results.FactorThink, results.FactorDuration,
		results.FactorWarmup:
		return key
	case results.FactorVersion:
		return "version"
	case results.FactorInstall:
		return "installation"
	}
	if k, ok := strings.CutPrefix(key, results.SettingPrefix); ok {
		return k
	}
	if k, ok := strings.CutPrefix(key, results.OptionPrefix); ok {
		return k
	}
	return key
}

// msAxis are the factors besides RTT whose durations an axis shows in milliseconds.
var msAxis = map[string]bool{"up": true, "down": true, "jitter": true}

// axisLabel is a factor's axis title with its unit.
func axisLabel(key string) string {
	switch key {
	case "":
		return ""
	case results.FactorRTT:
		return "added RTT, achieved (ms)"
	case "up", "down":
		return key + " one-way delay (ms)"
	case "jitter":
		return "jitter of each one-way delay (ms)"
	case "bandwidth":
		return "bandwidth each way (Mbit/s)"
	case "loss":
		return "segments lost each way (%)"
	case "profile":
		return "network profile"
	case results.FactorTerminals, results.FactorConnections:
		return key + " (count)"
	case results.FactorWarehouses:
		return "warehouses (count)"
	case results.FactorDuration, results.FactorWarmup:
		return factorLabel(key) + " (s)"
	}
	return factorLabel(key)
}

// metricUnit is the unit of a throughput metric.
func metricUnit(m string) string {
	if m == MetricTPS {
		return "transactions per second"
	}
	return "new orders per minute"
}

// displayLevel names one level of a factor in a legend or title: "RTT 0.1 ms",
// "10 terminals", "1 terminal", "ServerMode=Classic".
func displayLevel(key, level string) string {
	if level == "" {
		return factorLabel(key) + " (none)"
	}
	switch key {
	case results.FactorRTT:
		if v, ok := numericLevel(key, level); ok {
			return "RTT " + trimFloat(v) + " ms"
		}
		return "RTT " + level
	case results.FactorTerminals, results.FactorConnections, results.FactorWarehouses:
		if level == "1" {
			return level + " " + strings.TrimSuffix(key, "s")
		}
		return level + " " + key
	case results.FactorEngine, results.FactorTarget:
		return level
	case "jitter", "up", "down":
		if v, ok := numericLevel(key, level); ok {
			return key + " " + trimFloat(v) + " ms"
		}
	case "bandwidth", "loss", "distribution", "profile":
		return key + " " + level
	}
	return factorLabel(key) + "=" + level
}

// trimFloat writes a value without trailing zeros or float noise (0.30000000000000004).
func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// fmtNum writes a tick or table value for people: whole thousands separated by commas
// ("25,000"), at most three significant decimals below 1, no float noise.
func fmtNum(v float64) string {
	if v < 0 {
		return "−" + fmtNum(-v)
	}
	if v >= 1000 && v == math.Trunc(v) {
		s := strconv.FormatFloat(v, 'f', 0, 64)
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	return trimFloat(v)
}
