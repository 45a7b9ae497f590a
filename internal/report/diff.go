package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
)

// Diff compares two sets of runs — two runs, the repeats of a base and of a new profile,
// or two whole studies (HammerDB#868's "compare a base with a new profile"): what differed
// in their configuration, and how each figure changed, cell by cell, with a 95 % interval
// where both sides have repeats.
type Diff struct {
	// Metric is the throughput metric of both sides together (NOPM when every run is
	// TPC-C, else TPS).
	Metric string   `json:"metric"`
	A      DiffSide `json:"a"`
	B      DiffSide `json:"b"`
	// Factors are the keys whose values vary within a side (results.InferFactors of each
	// side, merged): cells are matched across the sides by their levels. A key that differs
	// only between the sides is a configuration difference, not a factor.
	Factors []string `json:"factors"`
	// Config holds only the configuration items whose values differ between the sides;
	// Values has A's then B's ("a | b" where a side's runs disagree).
	Config []ConfigItem `json:"config"`
	// Location holds the server settings that differ between the sides and say only
	// where each server keeps its files and listens (engine.Comparison.Location: data
	// directory, port, socket): differences by construction, listed apart from Config.
	Location []ConfigItem `json:"location,omitempty"`
	// Cells are the cells both sides have, in level order; OnlyA and OnlyB the keys of
	// cells one side lacks.
	Cells []DiffCell `json:"cells"`
	OnlyA []string   `json:"only_a,omitempty"`
	OnlyB []string   `json:"only_b,omitempty"`
	// Notes explain the intervals and what the figures are.
	Notes []string `json:"notes"`
}

// DiffSide describes one side of a Diff.
type DiffSide struct {
	// Label names the side for people: "study quickstart-latency", "run 12", "runs 1–5".
	Label string `json:"label"`
	// Studies are the study names of its runs, sorted ("" for runs outside a study).
	Studies []string `json:"studies"`
	// Runs are the ids of all its runs, ascending; Finished counts those that enter the
	// figures.
	Runs     []int64 `json:"runs"`
	Finished int     `json:"finished"`
}

// DiffCell is one cell's figures on both sides.
type DiffCell struct {
	// Key is "factor=level" pairs in factor order ("all runs" with no factors).
	Key     string   `json:"key"`
	Levels  []string `json:"levels"`
	Figures []Change `json:"figures"`
}

// Change is one figure on both sides and how it changed from A to B.
type Change struct {
	// Figure names the figure with its unit: "NOPM", "new_order p99 (ms)", "round trips
	// per transaction", "achieved RTT (ms)".
	Figure string `json:"figure"`
	// A and B are the means over each side's finished runs of the cell (N runs; an
	// interval with two or more).
	A Estimate `json:"a"`
	B Estimate `json:"b"`
	// Delta is B − A; Pct is Delta as a percentage of A (0 when A is 0).
	Delta float64 `json:"delta"`
	Pct   float64 `json:"pct"`
	// CI is the 95 % interval of B − A (Welch's t); nil unless both sides have two runs or
	// more.
	CI *Interval `json:"ci95,omitempty"`
	// Verdict is "higher" or "lower" when the interval excludes zero, "no difference
	// shown" when it includes it, "" without an interval.
	Verdict string `json:"verdict,omitempty"`
}

// Verdicts of a Change.
const (
	DiffHigher = "higher"
	DiffLower  = "lower"
	DiffSame   = "no difference shown"
)

// DiffRuns compares the runs of a with those of b. Each side may be a single run, repeats of
// one configuration, or a whole study; runs of any status are accepted and only finished
// ones enter the figures. Cells are matched by the levels of the keys that vary within a
// side. It fails when a side has no run or no finished run, naming the side. A pure
// function: the same runs give the same Diff.
func DiffRuns(a, b []results.Run) (*Diff, error) {
	for _, s := range []struct {
		name string
		runs []results.Run
	}{{"A", a}, {"B", b}} {
		if len(s.runs) == 0 {
			return nil, fmt.Errorf("report: diff: side %s has no runs: give a run id, several, or a study with runs", s.name)
		}
		fin := 0
		for i := range s.runs {
			if s.runs[i].Counted() {
				fin++
			}
		}
		if fin == 0 {
			return nil, fmt.Errorf("report: diff: side %s has no finished run: nothing to compare (see dblat results list)", s.name)
		}
	}
	d := &Diff{Metric: results.MetricOf(append(slices.Clone(a), b...)), A: side(a), B: side(b),
		Config: []ConfigItem{}, Cells: []DiffCell{}, Factors: []string{}}
	d.Factors = mergeKeys(results.InferFactors(a), results.InferFactors(b))
	if slices.Contains(d.Factors, results.FactorTerminals) && followsTerminals(a) && followsTerminals(b) {
		// One connection per terminal: connections only repeats the terminals.
		d.Factors = slices.DeleteFunc(d.Factors, func(k string) bool { return k == results.FactorConnections })
	}
	d.Config, d.Location = diffConfig(a, b, d.Factors)

	ga, gb := diffGroups(a, d.Factors), diffGroups(b, d.Factors)
	keys := map[string][]string{}
	for k, g := range ga {
		keys[k] = g.levels
	}
	for k, g := range gb {
		keys[k] = g.levels
	}
	ordered := diffOrder(keys, d.Factors, append(slices.Clone(a), b...))
	for _, k := range ordered {
		x, y := ga[k], gb[k]
		switch {
		case x == nil:
			d.OnlyB = append(d.OnlyB, k)
			continue
		case y == nil:
			d.OnlyA = append(d.OnlyA, k)
			continue
		}
		if len(x.fin) == 0 || len(y.fin) == 0 {
			if len(x.fin) == 0 {
				d.OnlyB = append(d.OnlyB, k+" (A: no finished run)")
			} else {
				d.OnlyA = append(d.OnlyA, k+" (B: no finished run)")
			}
			continue
		}
		d.Cells = append(d.Cells, DiffCell{Key: k, Levels: x.levels, Figures: diffFigures(d.Metric, x.fin, y.fin)})
	}
	d.Notes = []string{
		"Throughput is " + metricDesc(d.Metric) + ".",
		"Each side's figure is the mean over its finished runs of the cell; percentiles are the mean of the runs' own percentiles (so that repeats give an interval), not the pooled distribution the report draws.",
		"The change is B − A, in percent of A. Its 95 % interval is Welch's (unequal variances, Welch–Satterthwaite degrees of freedom) and needs two finished runs or more on both sides; a change whose interval includes zero is not one these repeats can tell from noise.",
		"Only configuration items whose values differ between the sides are listed; items that vary within a side are the factors the cells are matched by.",
	}
	return d, nil
}

// followsTerminals reports whether every run has one connection per terminal.
func followsTerminals(runs []results.Run) bool {
	for i := range runs {
		if c := runs[i].Params.Connections; c != 0 && c != runs[i].Params.Terminals {
			return false
		}
	}
	return true
}

// side describes runs as one side.
func side(runs []results.Run) DiffSide {
	s := DiffSide{Studies: []string{}, Runs: []int64{}}
	studies := map[string]bool{}
	for i := range runs {
		s.Runs = append(s.Runs, runs[i].ID)
		studies[runs[i].Study] = true
		if runs[i].Counted() {
			s.Finished++
		}
	}
	slices.Sort(s.Runs)
	s.Studies = slices.Sorted(maps.Keys(studies))
	switch {
	case len(s.Runs) == 1:
		s.Label = "run " + strconv.FormatInt(s.Runs[0], 10)
		if s.Studies[0] != "" {
			s.Label += " of study " + s.Studies[0]
		}
	case len(s.Studies) == 1 && s.Studies[0] != "":
		s.Label = "study " + s.Studies[0]
	default:
		s.Label = "runs " + idRanges(s.Runs)
	}
	return s
}

// idRanges writes ascending ids compactly: "1–5, 9, 12–13".
func idRanges(ids []int64) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, strconv.FormatInt(ids[i], 10))
		default:
			parts = append(parts, strconv.FormatInt(ids[i], 10)+"–"+strconv.FormatInt(ids[j], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// mergeKeys merges factor lists in results.InferFactors' order (standard keys first, then
// settings and options by name), without repeats.
func mergeKeys(lists ...[]string) []string {
	std := []string{results.FactorRTT, results.FactorTerminals, results.FactorConnections, results.FactorWarehouses,
		results.FactorEngine, results.FactorTarget, results.FactorThink, results.FactorDuration, results.FactorWarmup}
	seen := map[string]bool{}
	for _, l := range lists {
		for _, k := range l {
			seen[k] = true
		}
	}
	out := []string{}
	for _, k := range std {
		if seen[k] {
			out = append(out, k)
			delete(seen, k)
		}
	}
	return append(out, slices.Sorted(maps.Keys(seen))...)
}

// diffGroup is one side's runs of one cell.
type diffGroup struct {
	levels []string
	fin    []*results.Run
}

func diffGroups(runs []results.Run, factors []string) map[string]*diffGroup {
	out := map[string]*diffGroup{}
	for i := range runs {
		r := &runs[i]
		lv := make([]string, len(factors))
		parts := make([]string, len(factors))
		for f, k := range factors {
			lv[f] = results.FactorValue(r, k)
			parts[f] = k + "=" + lv[f]
		}
		key := strings.Join(parts, " ")
		if key == "" {
			key = allRuns
		}
		g := out[key]
		if g == nil {
			g = &diffGroup{levels: lv}
			out[key] = g
		}
		if r.Counted() {
			g.fin = append(g.fin, r)
		}
	}
	for _, g := range out {
		sort.Slice(g.fin, func(i, j int) bool { return g.fin[i].ID < g.fin[j].ID })
	}
	return out
}

// diffOrder orders cell keys by their factors' levels (results.SortFactorValues over both
// sides), first factor slowest.
func diffOrder(keys map[string][]string, factors []string, runs []results.Run) []string {
	levels := make([][]string, len(factors))
	for f, k := range factors {
		seen := map[string]bool{}
		for i := range runs {
			seen[results.FactorValue(&runs[i], k)] = true
		}
		levels[f] = slices.Sorted(maps.Keys(seen))
		results.SortFactorValues(levels[f])
	}
	out := slices.Sorted(maps.Keys(keys))
	idx := func(k string) []int {
		ix := make([]int, len(factors))
		for f, l := range keys[k] {
			ix[f] = slices.Index(levels[f], l)
		}
		return ix
	}
	sort.SliceStable(out, func(i, j int) bool { return slices.Compare(idx(out[i]), idx(out[j])) < 0 })
	return out
}

// diffConfig lists the configuration items whose values differ between the sides, except
// the factors (they vary within a side and make the cells), and apart from them the
// settings that only say where a server lives (locationSettings).
func diffConfig(a, b []results.Run, factors []string) (config, location []ConfigItem) {
	items := slices.Clone(runItems)
	items = append(items,
		configItem{"run", "seed", func(r *results.Run) string { return strconv.FormatInt(r.Params.Seed, 10) }},
		configItem{"run", "mix", func(r *results.Run) string { return mixText(r.Params.Mix) }},
		configItem{"run", "link", func(r *results.Run) string {
			if r.Link == nil {
				return "none"
			}
			return r.Link.Kind
		}},
	)
	opts, settings := map[string]bool{}, map[string]bool{}
	for _, runs := range [][]results.Run{a, b} {
		for i := range runs {
			for k := range runs[i].Params.Options {
				opts[k] = true
			}
			for k := range runs[i].Server.Settings {
				settings[k] = true
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		items = append(items, configItem{"option", k, func(r *results.Run) string { return r.Params.Options[k] }})
	}
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		items = append(items, configItem{"setting", k, func(r *results.Run) string {
			v, ok := r.Server.Settings[k]
			if !ok {
				return notReported
			}
			return v
		}})
	}
	isFactor := func(it configItem) bool {
		for _, f := range factors {
			if it.kind == "run" && it.name == f {
				return true
			}
			if it.kind == "option" && (f == it.name || f == results.OptionPrefix+it.name) {
				return true
			}
			if it.kind == "server" && (f == results.FactorEngine && it.name == "engine" || f == results.FactorTarget && it.name == "target") {
				return true
			}
		}
		return false
	}
	values := func(runs []results.Run, get func(*results.Run) string) string {
		seen := map[string]bool{}
		var fin []*results.Run
		for i := range runs {
			if runs[i].Counted() {
				fin = append(fin, &runs[i])
			}
		}
		for _, r := range fin {
			seen[get(r)] = true
		}
		return strings.Join(slices.Sorted(maps.Keys(seen)), " | ")
	}
	config = []ConfigItem{}
	where := locationSettings(append(slices.Clone(a), b...))
	for _, it := range items {
		if isFactor(it) {
			continue
		}
		va, vb := values(a, it.get), values(b, it.get)
		switch {
		case va == vb:
		case it.kind == "setting" && where[strings.ToLower(it.name)]:
			location = append(location, ConfigItem{Kind: it.kind, Name: it.name, Values: []string{va, vb}})
		default:
			config = append(config, ConfigItem{Kind: it.kind, Name: it.name, Values: []string{va, vb}})
		}
	}
	return config, location
}

// locationSettings are the lower-case names of the settings that say where the runs'
// servers keep their files and listen, as their engines declare them
// (engine.Comparison.Location).
func locationSettings(runs []results.Run) map[string]bool {
	out := map[string]bool{}
	seen := map[string]bool{}
	for i := range runs {
		name := runs[i].Server.Engine
		if seen[name] {
			continue
		}
		seen[name] = true
		e, err := engine.Lookup(name)
		if err != nil {
			continue
		}
		if c := engine.Caps(e).Comparer; c != nil {
			for _, k := range c.Comparison().Location {
				out[strings.ToLower(k)] = true
			}
		}
	}
	return out
}

// mixText writes a transaction mix as "type=weight" pairs by name ("" for the default).
func mixText(m map[string]float64) string {
	if len(m) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+strconv.FormatFloat(m[k], 'f', -1, 64))
	}
	return strings.Join(parts, ",")
}

// diffFigures computes the figures of one cell on both sides: the metric, the achieved RTT
// where a link was calibrated, each transaction type's p50 and p99 (in TPC-C's order), and
// the round trips per transaction where metered.
func diffFigures(metric string, a, b []*results.Run) []Change {
	var out []Change
	add := func(name string, get func(*results.Run) (float64, bool)) {
		xs, ys := collect(a, get), collect(b, get)
		if len(xs) == 0 || len(ys) == 0 {
			return
		}
		out = append(out, change(name, estimate(xs), estimate(ys)))
	}
	add(metric, func(r *results.Run) (float64, bool) { return results.MetricValue(r, metric), true })
	linked := func(rs []*results.Run) bool {
		for _, r := range rs {
			if r.Link != nil && r.Link.Samples > 0 {
				return true
			}
		}
		return false
	}
	if (linked(a) || linked(b)) && (a[0].Params.RTT != 0 || b[0].Params.RTT != 0) {
		// Where no RTT was asked for, the calibration measures only its own noise.
		add("achieved RTT (ms)", func(r *results.Run) (float64, bool) {
			return float64(analysis.AchievedRTT(r)) / float64(time.Millisecond), true
		})
	}
	types := map[string]bool{}
	for _, rs := range [][]*results.Run{a, b} {
		for _, r := range rs {
			for _, t := range r.Tx {
				types[t.Type] = true
			}
		}
	}
	for _, typ := range txOrder(slices.Sorted(maps.Keys(types))) {
		for _, p := range []struct {
			name string
			get  func(*results.TxSummary) int64
		}{{"p50", func(t *results.TxSummary) int64 { return t.P50Us }}, {"p99", func(t *results.TxSummary) int64 { return t.P99Us }}} {
			add(typ+" "+p.name+" (ms)", func(r *results.Run) (float64, bool) {
				for i := range r.Tx {
					if t := &r.Tx[i]; t.Type == typ && t.Committed+t.Rollbacks > 0 {
						return float64(p.get(t)) / 1000, true
					}
				}
				return 0, false
			})
		}
	}
	add("round trips per transaction", func(r *results.Run) (float64, bool) {
		var sum, w float64
		for _, t := range r.Tx {
			n := float64(t.Committed + t.Rollbacks)
			sum += t.RoundTrips * n
			w += n
		}
		if w == 0 || sum == 0 {
			return 0, false
		}
		return sum / w, true
	})
	return out
}

// collect returns get's values of the runs that have one.
func collect(rs []*results.Run, get func(*results.Run) (float64, bool)) []float64 {
	var out []float64
	for _, r := range rs {
		if v, ok := get(r); ok {
			out = append(out, v)
		}
	}
	return out
}

// change computes a Change from each side's estimate.
func change(name string, a, b Estimate) Change {
	c := Change{Figure: name, A: a, B: b, Delta: round(b.Mean-a.Mean, 4), CI: welch(a, b)}
	if a.Mean != 0 {
		c.Pct = round((b.Mean-a.Mean)/math.Abs(a.Mean)*100, 2)
	}
	if c.CI != nil {
		switch {
		case c.CI.Low > 0:
			c.Verdict = DiffHigher
		case c.CI.High < 0:
			c.Verdict = DiffLower
		default:
			c.Verdict = DiffSame
		}
	}
	return c
}

// WriteDiff writes d as plain text for a terminal: the two sides, the configuration items
// that differ, then the figures — one table of figures when there is one cell, else one
// table per figure with a row per cell.
func WriteDiff(w io.Writer, d *Diff) error {
	ew := words.NewWriter(w, "report: write diff")
	for _, s := range []struct {
		name string
		side DiffSide
	}{{"A", d.A}, {"B", d.B}} {
		ew.Printf("%s: %s, %s (%d finished): %s\n", s.name, s.side.Label, words.Count(len(s.side.Runs), "run"), s.side.Finished, idRanges(s.side.Runs))
	}

	if len(d.Config) == 0 {
		ew.Printf("\nConfiguration: the same on both sides\n")
	} else {
		verb := "differ"
		if len(d.Config) == 1 {
			verb = "differs"
		}
		ew.Printf("\nConfiguration: %s %s\n", words.Count(len(d.Config), "item"), verb)
		tw := ew.Table("  ")
		tw.Row("kind", "item", "A", "B")
		for _, it := range d.Config {
			tw.Row(it.Kind, it.Name, orNone(it.Values[0]), orNone(it.Values[1]))
		}
		tw.Flush()
	}

	if len(d.Location) > 0 {
		names := make([]string, len(d.Location))
		for i, it := range d.Location {
			names[i] = it.Name
		}
		ew.Printf("\nLocation, which differs between any two servers and is not compared: %s\n", strings.Join(names, ", "))
	}

	head := "change B − A (95 % interval where both sides have 2+ runs)"
	switch {
	case len(d.Cells) == 0:
		ew.Printf("\nNo cell has finished runs on both sides: nothing to compare.\n")
	case len(d.Cells) == 1 && len(d.Factors) == 0:
		ew.Printf("\nFigures: mean (runs) per side; %s\n", head)
		rows := [][]string{{"figure", "A", "B", "change", "95 % interval", ""}}
		for _, c := range d.Cells[0].Figures {
			rows = append(rows, append([]string{c.Figure}, changeCols(c)...))
		}
		writeAligned(ew, "  ", rows, func(col int) bool { return col >= 1 && col <= 4 })
	default:
		var figs []string
		for _, c := range d.Cells {
			for _, f := range c.Figures {
				if !slices.Contains(figs, f.Figure) {
					figs = append(figs, f.Figure)
				}
			}
		}
		for _, fig := range figs {
			ew.Printf("\n%s: mean (runs) per side; %s\n", fig, head)
			rows := [][]string{append(slices.Clone(d.Factors), "A", "B", "change", "95 % interval", "")}
			for _, c := range d.Cells {
				for _, f := range c.Figures {
					if f.Figure == fig {
						rows = append(rows, append(levelsText(c.Levels), changeCols(f)...))
					}
				}
			}
			nf := len(d.Factors)
			writeAligned(ew, "  ", rows, func(col int) bool { return col >= nf && col < nf+4 })
		}
	}
	if len(d.OnlyA) > 0 {
		ew.Printf("\nOnly in A: %s\n", strings.Join(d.OnlyA, "; "))
	}
	if len(d.OnlyB) > 0 {
		ew.Printf("\nOnly in B: %s\n", strings.Join(d.OnlyB, "; "))
	}
	ew.Printf("\nNotes\n")
	for _, n := range d.Notes {
		for i, l := range wrap(n, summaryWidth-2) {
			if i == 0 {
				ew.Printf("- %s\n", l)
			} else {
				ew.Printf("  %s\n", l)
			}
		}
	}
	return ew.Err()
}

// changeCols writes one Change as table columns: A, B, change, interval, verdict.
func changeCols(c Change) []string {
	side := func(e Estimate) string { return meanText(e.Mean) + " (" + strconv.Itoa(e.N) + ")" }
	pct := func(v float64) string { return fmt.Sprintf("%+.1f %%", v) }
	ch := pct(c.Pct)
	// From zero a percentage means nothing: the change is written in the figure's unit.
	unit := figureUnit(c.Figure)
	signed := func(v float64) string {
		if v < 0 {
			return "−" + meanText(-v)
		}
		return "+" + meanText(v)
	}
	if c.A.Mean == 0 {
		ch = signed(c.Delta) + " " + unit
	}
	ci := "–"
	if c.CI != nil {
		if c.A.Mean != 0 {
			ci = pct(c.CI.Low/math.Abs(c.A.Mean)*100) + " … " + pct(c.CI.High/math.Abs(c.A.Mean)*100)
		} else {
			ci = signed(c.CI.Low) + " … " + signed(c.CI.High) + " " + unit
		}
	}
	return []string{side(c.A), side(c.B), ch, ci, c.Verdict}
}

// figureUnit is the unit of a Change's figure: what its name gives in parentheses ("ms"
// for "new_order p99 (ms)"), "round trips" for the round trips per transaction, else the
// figure itself (NOPM, TPS).
func figureUnit(fig string) string {
	if i := strings.LastIndex(fig, " ("); i >= 0 && strings.HasSuffix(fig, ")") {
		return fig[i+2 : len(fig)-1]
	}
	if strings.HasPrefix(fig, "round trips") {
		return "round trips"
	}
	return fig
}
