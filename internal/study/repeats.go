package study

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/stats"
)

// Sequential repeats. A study with `repeat: MIN..MAX` and `precision: P%` gives each cell
// MIN runs, then more, one round at a time, while the 95 % confidence interval of the
// cell's headline metric (results.MetricOf: NOPM for TPC-C, else TPS) is wider than ±P % of
// its mean, up to MAX runs. The interval is Student's: mean ± t(0.975, n−1) · s / √n over
// the cell's n finished runs, the interval the report draws for a cell's mean. A fixed
// `repeat: N` is MIN = MAX = N: every cell gets N runs, whatever they measured.

// Confidence is the confidence of the intervals the stopping rule and the budget judge.
const Confidence = 0.95

// Default repeats of a study that gives a precision without a repeat range: three runs
// before the interval is first judged (with two, t is 12.7, so only a cell whose runs agree
// to a fraction of P stops), and at most ten (t is 2.26 there: an interval ±P % wide needs
// runs that vary by about P·√10/2.26 ≈ 1.4 P).
const (
	DefaultRepeatMin = 3
	DefaultRepeatMax = 10
)

// Interval is the 95 % confidence interval of a cell's mean over its finished runs: N runs,
// their mean and standard deviation, and the half-width t(0.975, N−1) · SD / √N (+Inf for
// fewer than two runs, which have no interval).
type Interval stats.Summary

// IntervalOf returns the interval of values, one per finished run.
func IntervalOf(values []float64) Interval { return IntervalWith(values, nil) }

// IntervalWith returns the interval of values, one per finished run, whose counting
// resolutions (results.Resolution, one per run; nil for none) bound the standard deviation
// from below: runs that agree more closely than counting can tell are known to no better
// than it, so that two windows that counted the same 64 New-Orders are not an interval of
// ±0.
func IntervalWith(values, resolutions []float64) Interval {
	return Interval(stats.Summarize(values, Confidence, resolutions))
}

// Relative is the half-width as a share of the mean: 0.1 for ±10 %. It is +Inf without an
// interval, or when the mean is 0 and the runs differ.
func (iv Interval) Relative() float64 { return stats.Summary(iv).Relative() }

// Adaptive reports whether the study's cells get a number of runs that depends on what
// they measured (repeat: MIN..MAX with MIN < MAX).
func (s *Study) Adaptive() bool { return s.Precision > 0 && s.RepeatMin < s.Repeat }

// Precise reports whether iv meets the study's precision: its half-width is at most
// Precision of the mean. A study without a precision has no target: false.
func (s *Study) Precise(iv Interval) bool {
	return s.Precision > 0 && iv.Relative() <= s.Precision
}

// Progress is a cell's state for scheduling.
type Progress struct {
	// Values are the headline metric of the cell's finished runs.
	Values []float64
	// Done is how many of the cell's runs count as done for the order of runs: its
	// finished runs, plus the runs that failed in this invocation of the study, which are
	// not tried again before it resumes (a failure repeated at once is seldom luck).
	Done int
	// Resolutions are the counting resolutions of the runs of Values
	// (results.Resolution), in the same order; nil where unknown.
	Resolutions []float64
	// SetAside is how many of the cell's finished runs were set aside as disturbed
	// (Study.Disturbed): counted neither in Values nor in Done, so that the cell runs
	// again.
	SetAside int
}

// Interval is the 95 % interval of the cell's finished runs (IntervalWith).
func (p Progress) Interval() Interval { return IntervalWith(p.Values, p.Resolutions) }

// Wanted is how many runs a cell with progress p is known to need now: Repeat for a
// fixed design; for an adaptive one, RepeatMin until it has them, then one more than it
// has while its interval is wider than the precision, up to Repeat (the runs after that
// depend on what the next one measures).
func (s *Study) Wanted(p Progress) int {
	switch {
	case !s.Adaptive() || p.Done >= s.Repeat:
		return s.Repeat
	case p.Done < s.RepeatMin:
		return s.RepeatMin
	case s.Precise(p.Interval()):
		return p.Done
	}
	return p.Done + 1
}

// Finished reports whether a cell with progress p needs no more runs.
func (s *Study) Finished(p Progress) bool { return p.Done >= s.Wanted(p) }

// ExpectedRuns is how many runs a cell whose runs vary by cv (standard deviation over
// mean) needs for its interval to meet the precision: the smallest n ≥ 2 with
// t(0.975, n−1) · cv / √n ≤ Precision, and limit+1 when no n up to limit does. A study
// without a precision needs Repeat.
func (s *Study) ExpectedRuns(cv float64, limit int) int {
	if s.Precision <= 0 {
		return s.Repeat
	}
	for n := 2; n <= limit; n++ {
		if stats.TQuantile(Confidence, float64(n-1))*cv/math.Sqrt(float64(n)) <= s.Precision {
			return n
		}
	}
	return limit + 1
}

// fixedRepeatLimit is the most repeats FixedRepeat proposes: beyond it a fixed design is no
// answer (the cell varies too much for its precision).
const fixedRepeatLimit = 1000

// FixedRepeat is the repeat a fixed design needs for every cell to meet the precision,
// from each cell's measured variation in progress (the most any cell needs, ExpectedRuns);
// ok is false when a cell has fewer than two runs or a mean of 0, or needs more than a
// thousand.
func (s *Study) FixedRepeat(progress map[string]Progress) (n int, ok bool) {
	most := 0
	for _, c := range s.Cells() {
		iv := progress[c.Key].Interval()
		if iv.N < 2 || iv.Mean == 0 {
			return 0, false
		}
		n := s.ExpectedRuns(iv.SD/math.Abs(iv.Mean), fixedRepeatLimit)
		if n > fixedRepeatLimit {
			return 0, false
		}
		most = max(most, n)
	}
	return most, most > 0
}

// Remaining is how many runs a cell with progress p is known to need still (Wanted).
func (s *Study) Remaining(p Progress) int { return max(0, s.Wanted(p)-p.Done) }

// Schedule returns the runs known to be needed now, in the order to run them, given each
// cell's progress (a cell missing from progress has none). It orders them as Plan does: in
// rounds, round r holding the r-th repeat of every cell that needs one, in the seeded order
// of that round. An adaptive study's plan reaches only one round past what its cells have
// measured; run its first round (Planned.Repeat of its first run) and schedule again.
func (s *Study) Schedule(progress map[string]Progress) []Planned {
	want := map[string]int{}
	for _, c := range s.Cells() {
		want[c.Key] = s.Wanted(progress[c.Key])
	}
	return s.ScheduleTo(progress, want)
}

// ScheduleTo returns the runs that bring every cell to want[its key] runs (none for a cell
// missing from want), in the order Schedule gives: to estimate a plan whose cells end with
// a number of runs other than what is known now.
func (s *Study) ScheduleTo(progress map[string]Progress, want map[string]int) []Planned {
	cells := s.Cells()
	last := 0
	for _, c := range cells {
		last = max(last, want[c.Key])
	}
	var out []Planned
	for r := 1; r <= last; r++ {
		type ranked struct {
			group, cell uint64
			c           *Cell
		}
		var round []ranked
		for i := range cells {
			c := &cells[i]
			if progress[c.Key].Done >= r || want[c.Key] < r {
				continue
			}
			x := ranked{cell: s.rank(r, "cell", c.Key), c: c}
			if s.Order == OrderGrouped {
				x.group = s.rank(r, "server", serverID(&c.Params))
			}
			round = append(round, x)
		}
		slices.SortFunc(round, func(a, b ranked) int {
			return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.cell, b.cell), strings.Compare(a.c.Key, b.c.Key))
		})
		for _, x := range round {
			out = append(out, Planned{Cell: *x.c, Repeat: r})
		}
	}
	return out
}

// FirstRound returns the runs of plan's first round (the leading runs that share its first
// run's Repeat).
func FirstRound(plan []Planned) []Planned {
	for i := range plan {
		if plan[i].Repeat != plan[0].Repeat {
			return plan[:i]
		}
	}
	return plan
}

// Priority is how badly a cell needs another run: its interval's relative half-width over
// the precision (over 1 when it misses it), or the relative half-width itself in a study
// without a precision; +Inf for a cell without an interval yet.
func (s *Study) Priority(p Progress) float64 {
	rel := p.Interval().Relative()
	if s.Precision > 0 {
		return rel / s.Precision
	}
	return rel
}

// Allot picks the runs of round that fit in budget, each costing cost(its cell): all of
// them when they fit, else the cells with the highest Priority first (ties in the round's
// order), skipping a run that does not fit and trying the next. The picked runs keep the
// round's order.
func (s *Study) Allot(round []Planned, progress map[string]Progress, cost func(Cell) time.Duration, budget time.Duration) []Planned {
	var total time.Duration
	for _, r := range round {
		total += cost(r.Cell)
	}
	if total <= budget {
		return round
	}
	idx := make([]int, len(round))
	for i := range idx {
		idx[i] = i
	}
	prio := make([]float64, len(round))
	for i, r := range round {
		prio[i] = s.Priority(progress[r.Cell.Key])
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(prio[b], prio[a]) })
	var picked []int
	left := budget
	for _, i := range idx {
		if c := cost(round[i].Cell); c <= left {
			picked = append(picked, i)
			left -= c
		}
	}
	slices.Sort(picked)
	out := make([]Planned, len(picked))
	for j, i := range picked {
		out[j] = round[i]
	}
	return out
}

// repeatRange matches a repeat range, "2..6".
var repeatRange = regexp.MustCompile(`^\s*(\d+)\s*\.\.\s*(\d+)\s*$`)

// parseRepeat reads a study's repeat: a whole number N ≥ 1, or a range MIN..MAX with
// 2 ≤ MIN ≤ MAX (an interval needs two runs).
func parseRepeat(s string) (lo, hi int, err error) {
	if m := repeatRange.FindStringSubmatch(s); m != nil {
		lo, _ = strconv.Atoi(m[1])
		hi, _ = strconv.Atoi(m[2])
		switch {
		case lo < 2:
			return 0, 0, fmt.Errorf("range must start at 2 runs or more (a confidence interval needs two), got %s", s)
		case hi < lo:
			return 0, 0, fmt.Errorf("range must not end below its start, got %s", s)
		}
		return lo, hi, nil
	}
	if _, err := strconv.Atoi(strings.TrimSpace(s)); err != nil {
		return 0, 0, fmt.Errorf("must be a whole number or a range MIN..MAX (like 2..6), got %q", s)
	}
	o, _ := studyKeys.Lookup("repeat")
	c, err := o.Canonical(s)
	n, _ := strconv.Atoi(c)
	return n, n, err
}

// parsePrecision reads a precision, "10%" (or "10 %", "2.5%"), as a fraction: 0.1.
func parsePrecision(s string) (float64, error) {
	t, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	p, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if !ok || err != nil || math.IsNaN(p) {
		return 0, fmt.Errorf("must be a percentage of the mean, like 10%%, got %q", s)
	}
	if p <= 0 || p >= 100 {
		return 0, fmt.Errorf("must be above 0%% and below 100%%, got %s", s)
	}
	return p / 100, nil
}

// FormatPrecision writes a precision as study files write it: "10%".
func FormatPrecision(p float64) string {
	return strconv.FormatFloat(p*100, 'f', -1, 64) + "%"
}
