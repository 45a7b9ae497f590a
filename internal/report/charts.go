package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
)

// Chart kinds.
const (
	// ChartThroughput plots the mean throughput of each cell with its 95 % interval.
	ChartThroughput = "throughput"
	// ChartPercentiles plots p50/p90/p99 response time of one transaction type.
	ChartPercentiles = "percentiles"
)

// Axis scales.
const (
	// ScaleLinear places numeric levels at their values.
	ScaleLinear = "linear"
	// ScaleCategorical places levels evenly, in order, labelled with their values: used for
	// non-numeric factors, and for numeric levels that span orders of magnitude (0.1 ms
	// steps next to 200 ms), where a linear axis would crowd the small levels into one spot.
	ScaleCategorical = "categorical"
	// ScaleLog is a logarithmic axis (response times spanning orders of magnitude).
	ScaleLog = "log"
)

// crowdedGap is the smallest gap between adjacent numeric levels, as a fraction of their
// range, for which a linear axis is used: at 1/20 a 600-point-wide axis keeps labels ≥ 30
// points apart, room for "0.25" in 10-point type. Closer levels get a categorical axis.
const crowdedGap = 1.0 / 20

// logRatio is the max/min ratio of plotted response times above which their axis is
// logarithmic: beyond 30× a linear axis flattens the small percentiles against zero.
const logRatio = 30

// Chart is the data of one chart.
type Chart struct {
	// ID is stable and unique in a report (an HTML anchor).
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Title string `json:"title"`
	// TxType is the transaction type of a ChartPercentiles chart.
	TxType string `json:"tx_type,omitempty"`
	X      Axis   `json:"x"`
	Y      Axis   `json:"y"`
	// Lines is true when a series' points are joined (numeric X levels); false draws points
	// only (categories have no order to join).
	Lines  bool     `json:"lines"`
	Series []Series `json:"series"`
	// Note says how to read the chart: what a point is, what the whiskers are, the scales.
	Note string `json:"note"`
}

// Axis is one axis of a chart.
type Axis struct {
	// Key is the factor on the X axis ("" when the study varies nothing).
	Key string `json:"key,omitempty"`
	// Label is the axis title with its unit.
	Label string `json:"label"`
	Scale string `json:"scale"`
	// Ticks are the X levels with their positions and labels; empty means automatic.
	Ticks []Tick `json:"ticks,omitempty"`
	// Min and Max bound the data of the axis over every chart of its kind and factor
	// layout, so that panels side by side share a scale.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Tick is one labelled position on an axis.
type Tick struct {
	Level string  `json:"level"`
	Value float64 `json:"value"`
	Label string  `json:"label"`
}

// Series is one line (or set of points) of a chart.
type Series struct {
	Name string `json:"name"`
	// Group names the combination of factor levels the series belongs to; series of one
	// group share a colour. Stat is what the points are ("mean", "p50", "p90", "p99");
	// series of one stat share a line style.
	Group  string  `json:"group"`
	Stat   string  `json:"stat"`
	Points []Point `json:"points"`
}

// Point is one cell's value in a series.
type Point struct {
	// Level is the X factor's level as stored; X its position on the axis.
	Level string  `json:"level"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	// N is the number of finished repeats behind the point.
	N int `json:"n"`
	// CI is the 95 % interval of a mean (nil when N < 2 or for percentiles).
	CI *Interval `json:"ci95,omitempty"`
}

// plan says how cells are laid out in a family of charts: which factor is on X, whose
// level combinations are lines, and whose are separate charts.
type plan struct {
	x      int   // factor index on X, -1 = none (a single "all runs" level)
	lines  []int // factor indexes whose combinations are series
	panels []int // factor indexes whose combinations are separate charts
}

// allRuns is the X level of a study that varies nothing.
const allRuns = "all runs"

// plans returns the chart layouts for the report's factors:
//   - with RTT: throughput vs RTT, one chart per terminals level, one line per combination of
//     the other factors (seed 000's "10 W 10 T" charts);
//   - with terminals: throughput vs terminals, one line per RTT, one chart per combination of
//     the other factors ("spinning the data around"); without RTT, one line per combination
//     of the other factors;
//   - with neither: throughput per level of the first factor, one line per combination of
//     the others; with no factor at all, one point for all runs.
//
// The first plan also lays out the response-time charts.
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
			p.panels = []int{term}
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
	if len(ps) == 0 {
		if len(r.Factors) == 0 {
			ps = append(ps, plan{x: -1})
		} else {
			ps = append(ps, plan{x: 0, lines: others(0)})
		}
	}
	return ps
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

// charts lays out every chart: the throughput charts of each plan, then one response-time
// chart per transaction type and panel of the first plan.
func (r *Report) charts() []Chart {
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
		out = append(out, r.throughputCharts(p, measured)...)
	}
	for _, typ := range r.TxTypes {
		out = append(out, r.percentileCharts(ps[0], typ, measured)...)
	}
	return out
}

// xAxis returns the X axis of plan p over the levels its cells have.
func (r *Report) xAxis(p plan, cells []*Cell) Axis {
	if p.x < 0 {
		return Axis{Label: "", Scale: ScaleCategorical, Ticks: []Tick{{Level: allRuns, Value: 0, Label: allRuns}}, Min: 0, Max: 0}
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
	a.Scale = ScaleLinear
	if !numeric || len(levels) < 2 || crowded(vals) {
		a.Scale = ScaleCategorical
	}
	for i, l := range levels {
		t := Tick{Level: l, Value: float64(i), Label: l}
		if numeric {
			t.Label = strconv.FormatFloat(vals[i], 'f', -1, 64)
			if a.Scale == ScaleLinear {
				t.Value = vals[i]
			}
		}
		if l == "" {
			t.Label = "(none)"
		}
		a.Ticks = append(a.Ticks, t)
	}
	a.Min, a.Max = a.Ticks[0].Value, a.Ticks[len(a.Ticks)-1].Value
	return a
}

// crowded reports whether sorted values have a gap smaller than crowdedGap of their range.
func crowded(vals []float64) bool {
	span := vals[len(vals)-1] - vals[0]
	if span <= 0 {
		return true
	}
	for i := 1; i < len(vals); i++ {
		if (vals[i]-vals[i-1])/span < crowdedGap {
			return true
		}
	}
	return false
}

// numericLevel returns the position of a level on a numeric axis: RTT in milliseconds,
// other durations in seconds, numbers as they are.
func numericLevel(key, level string) (float64, bool) {
	if d, err := time.ParseDuration(level); err == nil {
		if key == results.FactorRTT {
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
	panels []combo
	// cells maps panel key → line key → X tick index → cell.
	cells map[string]map[string]map[int]*Cell
	lines map[string][]combo // panel key → its lines
}

func (r *Report) family(p plan, cells []*Cell) chartFamily {
	fam := chartFamily{x: r.xAxis(p, cells), panels: r.combos(p.panels, cells),
		cells: map[string]map[string]map[int]*Cell{}, lines: map[string][]combo{}}
	tick := map[string]int{}
	for i, t := range fam.x.Ticks {
		tick[t.Level] = i
	}
	for _, pc := range fam.panels {
		var in []*Cell
		for _, c := range cells {
			if r.comboKey(p.panels, c) == pc.key {
				in = append(in, c)
			}
		}
		fam.lines[pc.key] = r.combos(p.lines, in)
		byLine := map[string]map[int]*Cell{}
		for _, c := range in {
			lk := r.comboKey(p.lines, c)
			if byLine[lk] == nil {
				byLine[lk] = map[int]*Cell{}
			}
			ti := 0
			if p.x >= 0 {
				ti = tick[c.Levels[p.x]]
			}
			byLine[lk][ti] = c
		}
		fam.cells[pc.key] = byLine
	}
	return fam
}

// title joins a chart's subject and its panel's levels.
func title(subject, panel string) string {
	if panel == "" {
		return subject
	}
	return subject + " — " + panel
}

func (r *Report) throughputCharts(p plan, cells []*Cell) []Chart {
	fam := r.family(p, cells)
	subject := r.Metric
	if p.x >= 0 {
		subject += " vs " + r.Factors[p.x].Label
	}
	unit := "new orders per minute"
	if r.Metric == MetricTPS {
		unit = "transactions per second"
	}
	var ymax float64
	var out []Chart
	for i, pc := range fam.panels {
		ch := Chart{
			ID: fmt.Sprintf("%s-%s-%d", ChartThroughput, idPart(fam.x.Key), i+1), Kind: ChartThroughput,
			Title: title(subject, pc.name), X: fam.x,
			Y:     Axis{Label: fmt.Sprintf("%s (%s)", r.Metric, unit), Scale: ScaleLinear},
			Lines: isNumericAxis(fam.x),
		}
		for _, lc := range fam.lines[pc.key] {
			name := lc.name
			if name == "" {
				name = "mean ± 95 % CI"
			}
			s := Series{Name: name, Group: lc.name, Stat: "mean"}
			for ti, t := range fam.x.Ticks {
				c := fam.cells[pc.key][lc.key][ti]
				if c == nil {
					continue
				}
				e := c.Throughput
				s.Points = append(s.Points, Point{Level: t.Level, X: t.Value, Y: e.Mean, N: e.N, CI: e.CI})
				ymax = max(ymax, e.Mean)
				if e.CI != nil {
					ymax = max(ymax, e.CI.High)
				}
			}
			ch.Series = append(ch.Series, s)
		}
		ch.Note = throughputNote(ch)
		out = append(out, ch)
	}
	for i := range out {
		out[i].Y.Min, out[i].Y.Max = 0, ymax
	}
	return out
}

// isNumericAxis reports whether an axis's levels are numbers (even when placed evenly).
func isNumericAxis(a Axis) bool {
	if a.Key == "" {
		return false
	}
	for _, t := range a.Ticks {
		if _, ok := numericLevel(a.Key, t.Level); !ok {
			return false
		}
	}
	return true
}

// Percentiles drawn in the response-time charts.
var percentiles = []struct {
	stat string
	get  func(*TxCell) int64
}{
	{"p50", func(t *TxCell) int64 { return t.P50Us }},
	{"p90", func(t *TxCell) int64 { return t.P90Us }},
	{"p99", func(t *TxCell) int64 { return t.P99Us }},
}

func (r *Report) percentileCharts(p plan, typ string, cells []*Cell) []Chart {
	fam := r.family(p, cells)
	subject := typ + " response time"
	if p.x >= 0 {
		subject += " vs " + r.Factors[p.x].Label
	}
	ymin, ymax := math.Inf(1), math.Inf(-1)
	pooled := true
	var out []Chart
	for i, pc := range fam.panels {
		ch := Chart{
			ID: fmt.Sprintf("%s-%s-%s-%d", ChartPercentiles, idPart(typ), idPart(fam.x.Key), i+1), Kind: ChartPercentiles,
			Title: title(subject, pc.name), TxType: typ, X: fam.x,
			Y:     Axis{Label: "response time (ms)", Scale: ScaleLinear},
			Lines: isNumericAxis(fam.x),
		}
		for _, lc := range fam.lines[pc.key] {
			for _, pct := range percentiles {
				name := strings.TrimSpace(lc.name + " " + pct.stat)
				s := Series{Name: name, Group: lc.name, Stat: pct.stat}
				for ti, t := range fam.x.Ticks {
					c := fam.cells[pc.key][lc.key][ti]
					if c == nil {
						continue
					}
					tx := findTx(c, typ)
					if tx == nil {
						continue
					}
					pooled = pooled && tx.Pooled
					y := float64(pct.get(tx)) / 1000
					s.Points = append(s.Points, Point{Level: t.Level, X: t.Value, Y: y, N: tx.Runs})
					ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
				}
				if len(s.Points) > 0 {
					ch.Series = append(ch.Series, s)
				}
			}
		}
		if len(ch.Series) > 0 {
			out = append(out, ch)
		}
	}
	for i := range out {
		out[i].Y.Min, out[i].Y.Max = ymin, ymax
		if ymin > 0 && ymax/ymin > logRatio {
			out[i].Y.Scale = ScaleLog
			out[i].Y.Label = "response time (ms, log scale)"
		}
		out[i].Note = percentileNote(out[i], pooled)
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

func throughputNote(ch Chart) string {
	b := strings.Builder{}
	b.WriteString("Each point is the mean of the finished repeats of one cell; whiskers are its 95 % confidence interval (Student's t, n−1 degrees of freedom). ")
	single := false
	for _, s := range ch.Series {
		for _, p := range s.Points {
			if p.N < 2 {
				single = true
			}
		}
	}
	if single {
		b.WriteString("Points from a single run have no interval. ")
	}
	b.WriteString(axisNote(ch.X))
	return strings.TrimSpace(b.String())
}

func percentileNote(ch Chart, pooled bool) string {
	b := strings.Builder{}
	if pooled {
		b.WriteString("Percentiles of the pooled distribution: the HDR histograms of a cell's finished repeats are merged, then read (not an average of the runs' percentiles). ")
	} else {
		b.WriteString("Some runs stored no histogram: their cells show the mean of the runs' own percentiles. ")
	}
	b.WriteString("Service time only; waiting for a pooled connection is excluded. ")
	if ch.Y.Scale == ScaleLog {
		b.WriteString("The time axis is logarithmic because the values span more than 30×. ")
	}
	b.WriteString(axisNote(ch.X))
	return strings.TrimSpace(b.String())
}

func axisNote(x Axis) string {
	if x.Scale == ScaleCategorical && isNumericAxis(x) {
		return "The " + axisLabel(x.Key) + " levels are placed evenly (a categorical axis): they span orders of magnitude, which a linear axis would crowd together; slopes between unequal steps are not to scale."
	}
	return ""
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

// factorLabel names a factor for people.
func factorLabel(key string) string {
	switch key {
	case results.FactorRTT:
		return "RTT"
	case results.FactorTerminals, results.FactorConnections, results.FactorWarehouses,
		results.FactorEngine, results.FactorTarget, results.FactorThink, results.FactorDuration,
		results.FactorWarmup:
		return key
	}
	if k, ok := strings.CutPrefix(key, results.SettingPrefix); ok {
		return k
	}
	if k, ok := strings.CutPrefix(key, results.OptionPrefix); ok {
		return k
	}
	return key
}

// axisLabel is a factor's axis title with its unit.
func axisLabel(key string) string {
	switch key {
	case "":
		return ""
	case results.FactorRTT:
		return "RTT added (ms)"
	case results.FactorDuration, results.FactorWarmup:
		return capitalize(factorLabel(key)) + " (s)"
	}
	return capitalize(factorLabel(key))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// displayLevel names one level of a factor in a legend or title: "RTT 0.1 ms",
// "10 terminals", "ServerMode=Classic".
func displayLevel(key, level string) string {
	if level == "" {
		return factorLabel(key) + " (none)"
	}
	switch key {
	case results.FactorRTT:
		if v, ok := numericLevel(key, level); ok {
			return "RTT " + strconv.FormatFloat(v, 'f', -1, 64) + " ms"
		}
		return "RTT " + level
	case results.FactorTerminals, results.FactorConnections, results.FactorWarehouses:
		return level + " " + key
	case results.FactorEngine, results.FactorTarget:
		return level
	}
	return factorLabel(key) + "=" + level
}
