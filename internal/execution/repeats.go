package execution

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/study"
	"github.com/dblat/dblat/internal/workload"
)

// Expectation is how many runs a cell of an adaptive study is expected to end with, and
// from what.
type Expectation struct {
	// Runs is the expected number of finished runs at the end, within the study's
	// RepeatMin..Repeat.
	Runs int
	// CV is the coefficient of variation (standard deviation over mean) of the headline
	// metric it is computed from; 0 with no Basis.
	CV float64
	// Basis says where CV comes from: BasisCell, BasisSimilar, BasisStudy, or "" (no
	// variation known: Runs is RepeatMin).
	Basis string
}

// Where an Expectation's variation comes from, best first.
const (
	// BasisCell: the cell's own finished runs in this study (two or more).
	BasisCell = "this cell"
	// BasisSimilar: finished runs of the same cell key in any study of the store. A cell key
	// is every parameter that changes what a run measures (engine, version, settings,
	// workload, scale, terminals, RTT, window, warm-up, options, ...) and nothing that only
	// schedules runs (repeat, precision, budget, seed of the order, cooldown): a similar
	// cell is this very configuration measured before, by this study or another.
	BasisSimilar = "same cell, other studies"
	// BasisStudy: the variation of this study's other cells, pooled over those with two or
	// more finished runs (relative to each cell's mean, weighted by degrees of freedom).
	BasisStudy = "this study's cells"
)

// similarLimit bounds the cells whose similar runs Plan looks up, one query each.
const similarLimit = 500

// Lister reads stored runs (results.Store has it).
type Lister interface {
	List(ctx context.Context, f results.Filter) ([]results.Run, error)
}

// Progress reads each cell's finished runs of st from the store: the headline metric of
// each (results.MetricOf over the study's runs, which it returns) and their count; runs set
// aside as disturbed are counted apart.
func Progress(ctx context.Context, store Lister, st *study.Study) (map[string]study.Progress, string, error) {
	runs, err := store.List(ctx, results.Filter{Study: st.Name, Status: results.StatusFinished})
	if err != nil {
		return nil, "", err
	}
	metric := results.MetricOf(runs)
	if def, err := workload.Lookup(st.Base.Workload); err == nil && len(runs) == 0 && def.Metric.Name != "" {
		metric = def.Metric.Name // what its runs will report
	}
	out := map[string]study.Progress{}
	// List is newest first: the values go in run order.
	for i := len(runs) - 1; i >= 0; i-- {
		r := &runs[i]
		p := out[r.CellKey]
		if r.SetAside != "" {
			p.SetAside++
		} else {
			p.Values = append(p.Values, results.MetricValue(r, metric))
			p.Resolutions = append(p.Resolutions, results.Resolution(r, metric))
			p.Done++
		}
		out[r.CellKey] = p
	}
	return out, metric, nil
}

// cv is the coefficient of variation of a cell's runs, no less than their counting
// resolution (study.Progress.Interval); ok is false for fewer than two or a mean of 0.
func cv(p study.Progress) (float64, bool) {
	iv := p.Interval()
	if iv.N < 2 || iv.Mean == 0 {
		return 0, false
	}
	return iv.SD / math.Abs(iv.Mean), true
}

// expect estimates how many runs each cell of an adaptive study ends with (see
// Expectation).
func (c *Core) expect(ctx context.Context, st *study.Study, cells []study.Cell, progress map[string]study.Progress, metric string) (map[string]Expectation, error) {
	out := map[string]Expectation{}
	var pooled, df float64
	for _, cell := range cells {
		if v, ok := cv(progress[cell.Key]); ok {
			k := float64(len(progress[cell.Key].Values) - 1)
			pooled += k * v * v
			df += k
		}
	}
	for i, cell := range cells {
		p := progress[cell.Key]
		e := Expectation{Runs: st.RepeatMin}
		if v, ok := cv(p); ok {
			e.CV, e.Basis = v, BasisCell
		} else if i < similarLimit {
			runs, err := c.Store.List(ctx, results.Filter{CellKey: cell.Key, Status: results.StatusFinished})
			if err != nil {
				return nil, err
			}
			var similar study.Progress
			for j := range runs {
				if r := &runs[j]; r.Study != st.Name && r.Counted() {
					similar.Values = append(similar.Values, results.MetricValue(r, metric))
					similar.Resolutions = append(similar.Resolutions, results.Resolution(r, metric))
				}
			}
			if v, ok := cv(similar); ok {
				e.CV, e.Basis = v, BasisSimilar
			}
		}
		if e.Basis == "" && df > 0 {
			e.CV, e.Basis = math.Sqrt(pooled/df), BasisStudy
		}
		if e.Basis != "" {
			e.Runs = min(max(st.ExpectedRuns(e.CV, st.Repeat), st.RepeatMin), st.Repeat)
		}
		switch {
		case st.Finished(p):
			e.Runs = p.Done
		case e.Runs <= p.Done:
			e.Runs = min(p.Done+1, st.Repeat) // it is known to need one more
		}
		out[cell.Key] = e
	}
	return out, nil
}

// Shortfall is a cell that missed the study's precision: its interval, and how many more
// runs its variation says it needs (More, at most moreLimit; Unbounded beyond).
type Shortfall struct {
	Cell      study.Cell
	Interval  study.Interval
	More      int
	Unbounded bool
	// Time is what More runs would take.
	Time time.Duration
}

// moreLimit bounds the runs a Shortfall counts: beyond it the cell's variation is too
// large for repeats to help (a factor to fix, not noise to average).
const moreLimit = 1000

// Shortfalls lists the cells of st whose interval is wider than the precision, with the
// runs and the time each would need to meet it: from its own variation, or with fewer
// than two runs the pooled variation of the others (pooledCV; 0 when unknown: then two
// runs). perRun is what one more run of a cell costs.
func Shortfalls(st *study.Study, progress map[string]study.Progress, perRun func(study.Cell) time.Duration) []Shortfall {
	if st.Precision <= 0 {
		return nil
	}
	var pooled, df float64
	for _, p := range progress {
		if v, ok := cv(p); ok {
			pooled += float64(len(p.Values)-1) * v * v
			df += float64(len(p.Values) - 1)
		}
	}
	var out []Shortfall
	for _, cell := range st.Cells() {
		p := progress[cell.Key]
		iv := p.Interval()
		if st.Precise(iv) {
			continue
		}
		v, ok := cv(p)
		if !ok && df > 0 {
			v, ok = math.Sqrt(pooled/df), true
		}
		need := 2
		if ok {
			need = st.ExpectedRuns(v, moreLimit)
		}
		s := Shortfall{Cell: cell, Interval: iv, More: max(need-iv.N, 1)}
		if need > moreLimit {
			s.Unbounded, s.More = true, moreLimit
		}
		s.Time = time.Duration(s.More) * perRun(cell)
		out = append(out, s)
	}
	return out
}

// FormatShortfall says what a Shortfall is in one line, after the cell's label.
func FormatShortfall(st *study.Study, s Shortfall) string {
	width := "no interval yet"
	if !math.IsInf(s.Interval.Half, 1) {
		width = fmt.Sprintf("±%s of the mean", pctText(s.Interval.Relative()))
	}
	more := fmt.Sprintf("about %d more %s, %s", s.More, runWord(s.More), s.Time.Round(time.Second))
	if s.Unbounded {
		more = fmt.Sprintf("more than %d runs: its runs vary too much for repeats to help", moreLimit)
	}
	return fmt.Sprintf("%s after %d %s, target ±%s: %s", width, s.Interval.N, runWord(s.Interval.N), study.FormatPrecision(st.Precision), more)
}

func runWord(n int) string {
	if n == 1 {
		return "run"
	}
	return "runs"
}

// pctText writes a share as a percentage: "12 %", "3.4 %", "∞ %".
func pctText(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "∞ %"
	case f >= 0.1:
		return fmt.Sprintf("%.0f %%", f*100)
	}
	return fmt.Sprintf("%.1f %%", f*100)
}
