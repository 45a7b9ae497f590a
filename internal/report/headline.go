package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/analysis"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
)

// Headline is what a report opens with: the question the study asks, a one-paragraph
// verdict, the knees of throughput against RTT, and the headline table.
type Headline struct {
	// Question is the study's question, from its factors ("What does added round-trip time
	// cost NOPM at 1, 4 and 16 terminals?").
	Question string `json:"question"`
	// Verdict answers it in a few sentences from the cells, the knees and the credibility
	// findings (AddFindings updates it).
	Verdict string `json:"verdict"`
	// Knees holds one row per series of throughput against RTT; empty without an RTT factor.
	Knees []KneeRow `json:"knees,omitempty"`
	// Table is the mean throughput of every series (rows) at every level of the first
	// chart's X factor (columns): the numbers behind the headline chart.
	Table Pivot `json:"table"`
}

// KneeRow is where one series' throughput falls by 10 % and by 50 % as RTT is added.
type KneeRow struct {
	// Series names the levels the series' cells share ("4 terminals"), or "all runs".
	Series string `json:"series"`
	// Base is the mean throughput (the report's metric) at the lowest RTT, requested as
	// BaseLevel and achieved as BaseRTT; MaxRTT is the highest RTT measured, beyond which
	// nothing is claimed. RTTs are achieved ones (0 where none was requested: the
	// calibration then measures its own noise); durations in JSON are nanoseconds.
	Base      float64       `json:"base"`
	BaseLevel string        `json:"base_level"`
	BaseRTT   time.Duration `json:"base_rtt"`
	MaxRTT    time.Duration `json:"max_rtt"`
	// Knee10 and Knee50 are the achieved RTTs at which the measured mean has fallen to 90 %
	// and 50 % of Base, interpolated between levels in time per transaction
	// (analysis.KneeAt); 0 when not reached up to MaxRTT.
	Knee10 time.Duration `json:"knee10,omitempty"`
	Knee50 time.Duration `json:"knee50,omitempty"`
	// Knee10Between and Knee50Between, when a knee is 0, are the two levels its crossing
	// lies between when they are too far apart to place it (analysis.KneeAt).
	Knee10Between []time.Duration `json:"knee10_between,omitempty"`
	Knee50Between []time.Duration `json:"knee50_between,omitempty"`
	// Fits says whether the latency model fits the series (analysis.Fit.Fits); then
	// ModelKnee10 and ModelKnee50 are the same crossings on the fitted curve, which is
	// smooth between levels, and MaxErrPct its largest error at a measured level.
	Fits        bool          `json:"fits"`
	ModelKnee10 time.Duration `json:"model_knee10,omitempty"`
	ModelKnee50 time.Duration `json:"model_knee50,omitempty"`
	MaxErrPct   float64       `json:"max_err_pct,omitempty"`
}

// Best10 and Best50 are the knees a reader should quote: the model's where the model fits
// (smooth between levels), else the measured ones.
func (k KneeRow) Best10() time.Duration {
	if k.Fits && k.ModelKnee10 > 0 {
		return k.ModelKnee10
	}
	return k.Knee10
}

// Best50 is Best10 for the −50 % knee.
func (k KneeRow) Best50() time.Duration {
	if k.Fits && k.ModelKnee50 > 0 {
		return k.ModelKnee50
	}
	return k.Knee50
}

// Pivot is a table of cell means: one row per series, one column per X level.
type Pivot struct {
	// Corner names what the rows and columns are ("terminals \ RTT").
	Corner  string     `json:"corner"`
	Columns []string   `json:"columns"`
	Rows    []PivotRow `json:"rows"`
}

// PivotRow is one series of a Pivot: its name and one estimate per column, nil where the
// series has no finished run at that level.
type PivotRow struct {
	Name  string      `json:"name"`
	Cells []*Estimate `json:"cells"`
}

// headline computes the question, knees, table and verdict from the cells.
func (r *Report) headline(fits []analysis.Fit) Headline {
	h := Headline{Question: r.question(), Table: r.pivot(), Knees: r.knees(fits)}
	h.Verdict = r.verdict(h.Knees)
	return h
}

// question phrases what the study's factors ask.
func (r *Report) question() string {
	rtt, term := r.factorIndex(results.FactorRTT), r.factorIndex(results.FactorTerminals)
	var other []string
	for i, f := range r.Factors {
		if i != rtt && i != term {
			other = append(other, f.Label)
		}
	}
	per := ""
	if len(other) > 0 {
		per = " for each " + listAnd(other, "and")
	}
	m := r.Metric
	switch {
	case rtt >= 0 && term >= 0:
		return fmt.Sprintf("What does added network round-trip time (%s) cost %s at %s terminals%s, and how much of it do more terminals win back?",
			levelSpan(r.Factors[rtt]), m, levelList(r.Factors[term]), per)
	case rtt >= 0:
		return fmt.Sprintf("What does added network round-trip time (%s) cost %s%s?", levelSpan(r.Factors[rtt]), m, per)
	case term >= 0:
		return fmt.Sprintf("How does %s scale from %s terminals%s?", m, levelList(r.Factors[term]), per)
	case len(r.Factors) > 0:
		return fmt.Sprintf("How does %s differ between %s?", m, listAnd(other, "and"))
	}
	return fmt.Sprintf("What %s do these runs reach?", m)
}

// levelSpan is "up to 20 ms" for an RTT factor.
func levelSpan(f Factor) string {
	if len(f.Levels) == 0 {
		return "none measured yet"
	}
	v, ok := numericLevel(f.Key, f.Levels[len(f.Levels)-1])
	if !ok {
		return strings.Join(f.Levels, ", ")
	}
	return "up to " + msText2(time.Duration(v*float64(time.Millisecond)))
}

// levelList is "1, 4 and 16", or "1 to 100" for more than four levels.
func levelList(f Factor) string {
	if len(f.Levels) == 0 {
		return "no"
	}
	if len(f.Levels) > 4 {
		return f.Levels[0] + " to " + f.Levels[len(f.Levels)-1]
	}
	return listAnd(f.Levels, "and")
}

// listAnd joins "a", "a and b", "a, b and c".
func listAnd(xs []string, and string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " " + and + " " + xs[len(xs)-1]
}

// pivot lays the cells of the first plan out as a table: series by X level.
func (r *Report) pivot() Pivot {
	pv := Pivot{Columns: []string{}, Rows: []PivotRow{}}
	var measured []*Cell
	for i := range r.Cells {
		if r.Cells[i].Throughput.N > 0 {
			measured = append(measured, &r.Cells[i])
		}
	}
	if len(measured) == 0 {
		return pv
	}
	p := r.plans()[0]
	var cols []string
	if p.x < 0 {
		cols = []string{allRuns}
		pv.Columns = []string{allRuns}
	} else {
		f := r.Factors[p.x]
		present := map[string]bool{}
		for _, c := range measured {
			present[c.Levels[p.x]] = true
		}
		for _, l := range f.Levels {
			if present[l] {
				cols = append(cols, l)
				pv.Columns = append(pv.Columns, columnLabel(f.Key, l))
			}
		}
	}
	rowFs := append(slices.Clone(p.panels), p.lines...)
	var names []string
	for _, f := range rowFs {
		names = append(names, r.Factors[f].Label)
	}
	pv.Corner = strings.Join(names, ", ")
	if p.x >= 0 {
		if pv.Corner != "" {
			pv.Corner += " \\ "
		}
		pv.Corner += r.Factors[p.x].Label
	}
	for _, rc := range r.combos(rowFs, measured) {
		row := PivotRow{Name: rc.name, Cells: make([]*Estimate, len(cols))}
		if row.Name == "" {
			row.Name = allRuns
		}
		for _, c := range measured {
			if r.comboKey(rowFs, c) != rc.key {
				continue
			}
			col := 0
			if p.x >= 0 {
				col = slices.Index(cols, c.Levels[p.x])
			}
			e := c.Throughput
			row.Cells[col] = &e
		}
		pv.Rows = append(pv.Rows, row)
	}
	if len(pv.Rows) == 1 && len(pv.Columns) == 1 {
		return Pivot{Columns: []string{}, Rows: []PivotRow{}} // one number: the verdict says it
	}
	return pv
}

// columnLabel names a level in a table heading: "0", "1 ms", "0.5 ms" for RTT.
func columnLabel(key, level string) string {
	if key == results.FactorRTT {
		if v, ok := numericLevel(key, level); ok {
			if v == 0 {
				return "0"
			}
			return trimFloat(v) + " ms"
		}
	}
	return orNone(level)
}

// knees returns the knees of each series of throughput against RTT, measured on the
// report's metric at the cells' achieved RTTs, with the model's where it fits.
func (r *Report) knees(fits []analysis.Fit) []KneeRow {
	rtt := r.factorIndex(results.FactorRTT)
	if rtt < 0 {
		return nil
	}
	var rest []int
	for i := range r.Factors {
		if i != rtt {
			rest = append(rest, i)
		}
	}
	var measured []*Cell
	for i := range r.Cells {
		if r.Cells[i].Throughput.N > 0 {
			measured = append(measured, &r.Cells[i])
		}
	}
	fitBy := map[string]*analysis.Fit{}
	for i := range fits {
		fitBy[fits[i].Series] = &fits[i]
	}
	var out []KneeRow
	for _, sc := range r.combos(rest, measured) {
		var line []*Cell
		for _, c := range measured {
			if r.comboKey(rest, c) == sc.key {
				line = append(line, c)
			}
		}
		slices.SortStableFunc(line, func(a, b *Cell) int {
			return slices.Index(r.Factors[rtt].Levels, a.Levels[rtt]) - slices.Index(r.Factors[rtt].Levels, b.Levels[rtt])
		})
		if len(line) < 2 {
			continue
		}
		rtts, ys := make([]time.Duration, len(line)), make([]float64, len(line))
		for i, c := range line {
			rtts[i], ys[i] = c.AchievedRTT, c.Throughput.Mean
			if r.levelRTT(c.Levels[rtt]) == 0 {
				rtts[i] = 0
			}
		}
		k := KneeRow{Series: sc.name, Base: ys[0], BaseLevel: line[0].Levels[rtt], BaseRTT: rtts[0], MaxRTT: rtts[len(rtts)-1]}
		k.Knee10, k.Knee10Between = analysis.KneeAt(rtts, ys, analysis.Knee10)
		k.Knee50, k.Knee50Between = analysis.KneeAt(rtts, ys, analysis.Knee50)
		if k.Series == "" {
			k.Series = allRuns
		}
		if f := fitBy[r.fitSeriesName(line[0])]; f != nil && f.Fits {
			k.Fits, k.ModelKnee10, k.ModelKnee50, k.MaxErrPct = true, f.ModelKnee10, f.ModelKnee50, f.MaxErrPct
		}
		out = append(out, k)
	}
	return out
}

// verdict writes the headline paragraph: how far throughput falls with RTT, how much more
// terminals keep, how the other factors' levels compare, whether the model fits, and what
// the credibility check found.
func (r *Report) verdict(knees []KneeRow) string {
	if r.Counts.Finished == 0 {
		return "No run has finished yet: there is nothing to conclude."
	}
	var s []string
	if rs := r.rateSentence(); rs != "" {
		s = append(s, rs)
	}
	s = append(s, r.kneeSentence(knees)...)
	s = append(s, r.keepSentence()...)
	s = append(s, r.compareSentence()...)
	if len(s) == 0 {
		s = append(s, r.rangeSentence())
	}
	if len(knees) > 0 {
		fit := 0
		for _, k := range knees {
			if k.Fits {
				fit++
			}
		}
		switch {
		case fit == len(knees):
			s = append(s, fmt.Sprintf("The latency model N/(R·r + s) fits %s within %.0f %%.", theOneOr(len(knees), "series", "every series"), analysis.FitTolerance*100))
		case fit > 0:
			s = append(s, fmt.Sprintf("The latency model N/(R·r + s) fits %d of %d series within %.0f %%.", fit, len(knees), analysis.FitTolerance*100))
		}
	}
	if rt := r.retrySentence(); rt != "" {
		s = append(s, rt)
	}
	if c := r.credibilitySentence(); c != "" {
		s = append(s, c)
	}
	return strings.Join(s, " ")
}

// retrySentence says how many transactions were retried after a conflict, at most, next
// to the throughput they are part of; "" when none was.
func (r *Report) retrySentence() string {
	var worst *Cell
	for i := range r.Cells {
		if c := &r.Cells[i]; c.RetryRate > 0 && (worst == nil || c.RetryRate > worst.RetryRate) {
			worst = c
		}
	}
	if worst == nil {
		return ""
	}
	where := ""
	if worst.Key != "" {
		where = " (" + worst.Key + ")"
	}
	return fmt.Sprintf("Up to %s of the transactions were retried after a serialization failure, deadlock or update conflict%s: they count in the throughput, and their retries in its response times.", pctText(worst.RetryRate), where)
}

// plural is "the series" for one, else all.
func theOneOr(n int, one, all string) string {
	if n == 1 {
		return "the " + one
	}
	return all
}

// kneeSentence says where throughput falls 10 % and 50 %: per series for up to three, else
// the earliest and the latest.
func (r *Report) kneeSentence(knees []KneeRow) []string {
	if len(knees) == 0 {
		return nil
	}
	m := r.Metric
	// where says where one knee is: "by 1.2 ms", or "between 0 and 20 ms" when its levels
	// are too far apart to place it; "" when it is not reached.
	where := func(d time.Duration, between []time.Duration) string {
		switch {
		case d > 0:
			return "by " + msText2(d)
		case len(between) == 2:
			return "between " + strings.TrimSuffix(msText2(between[0]), " ms") + " and " + msText2(between[1])
		}
		return ""
	}
	phrase := func(k KneeRow) string {
		a, b := where(k.Best10(), k.Knee10Between), where(k.Best50(), k.Knee50Between)
		switch {
		case a == "":
			return "less than 10 % up to " + msText2(k.MaxRTT)
		case b == "":
			return "10 % " + a + " and less than 50 % up to " + msText2(k.MaxRTT)
		}
		return "10 % " + a + " and 50 % " + b
	}
	if len(knees) == 1 {
		return []string{fmt.Sprintf("%s falls %s of added RTT.", m, phrase(knees[0]))}
	}
	if len(knees) <= 3 {
		s := fmt.Sprintf("With %s, %s falls %s of added RTT", knees[0].Series, m, phrase(knees[0]))
		for _, k := range knees[1:] {
			s += fmt.Sprintf("; with %s, %s", k.Series, phrase(k))
		}
		return []string{s + "."}
	}
	// Many series: the range of each knee, and which series falls first and last. A knee
	// only bracketed by two levels has fallen by the upper one.
	best10 := func(k KneeRow) time.Duration {
		if d := k.Best10(); d > 0 || len(k.Knee10Between) < 2 {
			return d
		}
		return k.Knee10Between[1]
	}
	best50 := func(k KneeRow) time.Duration {
		if d := k.Best50(); d > 0 || len(k.Knee50Between) < 2 {
			return d
		}
		return k.Knee50Between[1]
	}
	span := func(get func(KneeRow) time.Duration) (lo, hi time.Duration, first, last string, missing int) {
		for _, k := range knees {
			d := get(k)
			if d == 0 {
				missing++
				continue
			}
			if lo == 0 || d < lo {
				lo, first = d, k.Series
			}
			if d > hi {
				hi, last = d, k.Series
			}
		}
		return
	}
	rng := func(lo, hi time.Duration) string {
		if msText2(lo) == msText2(hi) {
			return msText2(lo)
		}
		return strings.TrimSuffix(msText2(lo), " ms") + "–" + msText2(hi)
	}
	lo10, hi10, first, last, miss10 := span(best10)
	lo50, hi50, _, _, miss50 := span(best50)
	if lo10 == 0 {
		return []string{fmt.Sprintf("%s stays within 10 %% in all %d series up to the highest RTT measured.", m, len(knees))}
	}
	s := fmt.Sprintf("%s falls 10 %% by %s", m, rng(lo10, hi10))
	if lo50 > 0 {
		s += fmt.Sprintf(" and 50 %% by %s", rng(lo50, hi50))
	}
	if lo10 == hi10 && lo50 == hi50 {
		s += fmt.Sprintf(" of added RTT in each of the %d series", len(knees))
	} else {
		s += fmt.Sprintf(" of added RTT across the %d series (earliest: %s; latest: %s)", len(knees), first, last)
	}
	switch {
	case miss10 > 0:
		s += fmt.Sprintf("; %d stay within 10 %%", miss10)
	case miss50 > 0 && lo50 > 0:
		s += fmt.Sprintf("; %d do not halve", miss50)
	case lo50 == 0:
		s += "; none halves"
	}
	return []string{s + "."}
}

// keepSentence says, at one RTT, what share of their throughput at the lowest RTT each
// terminals level keeps: the RTT is the first at which the fewest terminals have lost half,
// else the highest.
func (r *Report) keepSentence() []string {
	rtt, term := r.factorIndex(results.FactorRTT), r.factorIndex(results.FactorTerminals)
	if rtt < 0 || term < 0 || len(r.Factors[term].Levels) < 2 || len(r.Factors[rtt].Levels) < 2 {
		return nil
	}
	rl := r.Factors[rtt].Levels
	var rest []int
	for i := range r.Factors {
		if i != rtt && i != term {
			rest = append(rest, i)
		}
	}
	// mean[other combo][terminals level][rtt level]
	type key struct {
		other    string
		term, rt int
	}
	mean := map[key]float64{}
	others := map[string]bool{}
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Throughput.N == 0 {
			continue
		}
		idx := r.cellIdx(c)
		o := r.comboKey(rest, c)
		others[o] = true
		mean[key{o, idx[term], idx[rtt]}] = c.Throughput.Mean
	}
	keep := func(o string, t, rt int) (float64, bool) {
		b, ok0 := mean[key{o, t, 0}]
		x, ok1 := mean[key{o, t, rt}]
		if !ok0 || !ok1 || b <= 0 {
			return 0, false
		}
		return x / b, true
	}
	// The RTT to read at: where the fewest terminals (in any combination) first keep ≤ 50 %.
	at := len(rl) - 1
	for rt := 1; rt < len(rl) && at == len(rl)-1; rt++ {
		for o := range others {
			if k, ok := keep(o, 0, rt); ok && k <= 0.5 {
				at = rt
				break
			}
		}
	}
	var parts []string
	for t, tl := range r.Factors[term].Levels {
		lo, hi, n := math.Inf(1), math.Inf(-1), 0
		for o := range others {
			if k, ok := keep(o, t, at); ok {
				lo, hi, n = math.Min(lo, k), math.Max(hi, k), n+1
			}
		}
		if n == 0 {
			continue
		}
		pct := fmt.Sprintf("%.0f %%", lo*100)
		if math.Round(hi*100) != math.Round(lo*100) {
			pct = fmt.Sprintf("%.0f–%.0f %%", lo*100, hi*100)
		}
		verb := " keep "
		if tl == "1" {
			verb = " keeps "
		}
		parts = append(parts, displayLevel(results.FactorTerminals, tl)+verb+pct)
	}
	if len(parts) < 2 {
		return nil
	}
	across := ""
	if len(others) > 1 {
		across = " (range over " + joinLabels(r, rest) + ")"
	}
	return []string{fmt.Sprintf("At %s of added RTT, %s of their %s at %s%s.",
		msText2(r.levelRTT(rl[at])), listAnd(parts, "and"), r.Metric, columnLabel(results.FactorRTT, rl[0]), across)}
}

// levelRTT is a requested RTT level as a duration.
func (r *Report) levelRTT(level string) time.Duration {
	d, _ := time.ParseDuration(level)
	return d
}

// compareSentence ranks the combinations of the factors other than RTT and terminals at
// the lowest RTT and the most terminals: which leads, by how much the others trail, and
// whether the repeats' intervals separate them.
func (r *Report) compareSentence() []string {
	rtt, term := r.factorIndex(results.FactorRTT), r.factorIndex(results.FactorTerminals)
	var rest []int
	for i := range r.Factors {
		if i != rtt && i != term {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	var out []string
	for _, at := range r.compareAt(rtt, term) {
		var cells []*Cell
		for i := range r.Cells {
			c := &r.Cells[i]
			idx := r.cellIdx(c)
			if c.Throughput.N == 0 || (rtt >= 0 && idx[rtt] != at[0]) || (term >= 0 && idx[term] != at[1]) {
				continue
			}
			cells = append(cells, c)
		}
		if len(cells) < 2 {
			continue
		}
		slices.SortStableFunc(cells, func(a, b *Cell) int {
			return -cmpFloat(a.Throughput.Mean, b.Throughput.Mean)
		})
		best := cells[0]
		if best.Throughput.Mean <= 0 {
			continue
		}
		var where []string
		if rtt >= 0 {
			where = append(where, "RTT "+columnLabel(results.FactorRTT, r.Factors[rtt].Levels[at[0]]))
		}
		if term >= 0 {
			where = append(where, displayLevel(results.FactorTerminals, r.Factors[term].Levels[at[1]]))
		}
		name := func(c *Cell) string { return r.comboName(rest, restIdx(r.cellIdx(c), rest)) }
		var trail []string
		for _, c := range cells[1:] {
			d := (1 - c.Throughput.Mean/best.Throughput.Mean) * 100
			trail = append(trail, fmt.Sprintf("%s %.0f %% lower", name(c), d))
		}
		s := fmt.Sprintf("%s leads with %s %s", name(best), fmtNum(math.Round(best.Throughput.Mean)), r.Metric)
		if len(where) > 0 {
			s = "At " + strings.Join(where, " and ") + ", " + s
		}
		s += "; " + listAnd(trail, "and")
		if overlaps(best.Throughput, cells[1].Throughput) {
			s += " (within the repeats' 95 % intervals)"
		} else if best.Throughput.CI == nil || cells[1].Throughput.CI == nil {
			s += " (single runs)"
		}
		out = append(out, s+".")
	}
	return out
}

// compareAt returns the (rtt, terminals) level indexes to compare the other factors at:
// the lowest RTT and the highest, each at the most terminals.
func (r *Report) compareAt(rtt, term int) [][2]int {
	t := 0
	if term >= 0 {
		t = len(r.Factors[term].Levels) - 1
	}
	if rtt < 0 {
		return [][2]int{{0, t}}
	}
	return [][2]int{{0, t}, {len(r.Factors[rtt].Levels) - 1, t}}[:min(2, len(r.Factors[rtt].Levels))]
}

func restIdx(all []int, fs []int) []int {
	out := make([]int, len(fs))
	for i, f := range fs {
		out[i] = all[f]
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// overlaps reports whether two estimates' 95 % intervals overlap; false when either has
// none.
func overlaps(a, b Estimate) bool {
	if a.CI == nil || b.CI == nil {
		return false
	}
	return a.CI.Low <= b.CI.High && b.CI.Low <= a.CI.High
}

// rangeSentence states the highest and lowest cell, for studies without RTT or other
// factors to compare.
func (r *Report) rangeSentence() string {
	var hi, lo *Cell
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Throughput.N == 0 {
			continue
		}
		if hi == nil || c.Throughput.Mean > hi.Throughput.Mean {
			hi = c
		}
		if lo == nil || c.Throughput.Mean < lo.Throughput.Mean {
			lo = c
		}
	}
	if hi == nil {
		return ""
	}
	name := func(c *Cell) string {
		var parts []string
		for i, l := range c.Levels {
			parts = append(parts, displayLevel(r.Factors[i].Key, l))
		}
		return strings.Join(parts, ", ")
	}
	if hi == lo {
		s := fmt.Sprintf("%s is %s", r.Metric, fmtNum(math.Round(hi.Throughput.Mean)))
		if hi.Throughput.CI != nil {
			s += fmt.Sprintf(" ± %s (95 %%, %d runs)", fmtNum(math.Round(hi.Throughput.CI.Half)), hi.Throughput.N)
		}
		return s + "."
	}
	return fmt.Sprintf("%s ranges from %s (%s) to %s (%s).", r.Metric, fmtNum(math.Round(lo.Throughput.Mean)), name(lo),
		fmtNum(math.Round(hi.Throughput.Mean)), name(hi))
}

// credibilitySentence says what the credibility findings amount to.
func (r *Report) credibilitySentence() string {
	var n [3]int
	for _, w := range r.Warnings {
		switch w.Severity {
		case "error":
			n[2]++
		case "warning":
			n[1]++
		default:
			n[0]++
		}
	}
	if r.Analysis == nil && len(r.Warnings) == 0 {
		return ""
	}
	switch {
	case n[2] > 0:
		return fmt.Sprintf("Do not quote these figures yet: the credibility check found %s and %s (see Findings).", words.Count(n[2], "error"), words.Count(n[1], "warning"))
	case n[1] > 0:
		return fmt.Sprintf("Read them with the credibility check's %s in mind (see Findings).", words.Count(n[1], "warning"))
	}
	return "The credibility check found nothing that stops a comparison."
}

// msText2 writes a duration in milliseconds with two significant figures for people:
// "0.12 ms", "1.5 ms", "20 ms", "0" for none.
func msText2(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms == 0 {
		return "0"
	}
	var s string
	switch a := math.Abs(ms); {
	case a < 0.01:
		s = trimFloat(math.Round(ms*1e4) / 1e4)
	case a < 0.1:
		s = trimFloat(math.Round(ms*1e3) / 1e3)
	case a < 1:
		s = trimFloat(math.Round(ms*100) / 100)
	case a < 10:
		s = trimFloat(math.Round(ms*10) / 10)
	default:
		s = trimFloat(math.Round(ms))
	}
	return s + " ms"
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
