package study

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/stats"
)

const adaptiveSrc = head + `repeat: 2..6
precision: 10%
seed: 42
base: {duration: 10s, warmup: 2s}
factors:
  rtt: [0, 1ms]
  terminals: [1, 4]
`

func TestParseRepeatPrecisionBudget(t *testing.T) {
	s := mustParse(t, adaptiveSrc+"budget: 1h30m\n")
	if s.RepeatMin != 2 || s.Repeat != 6 || s.Precision != 0.1 || s.Budget != 90*time.Minute || !s.Adaptive() {
		t.Errorf("repeat %d..%d precision %v budget %v adaptive %v", s.RepeatMin, s.Repeat, s.Precision, s.Budget, s.Adaptive())
	}
	if s := mustParse(t, head+"repeat: 4\n"); s.RepeatMin != 4 || s.Repeat != 4 || s.Adaptive() {
		t.Errorf("fixed repeat: %d..%d adaptive %v", s.RepeatMin, s.Repeat, s.Adaptive())
	}
	if s := mustParse(t, head+"precision: 2.5 %\n"); s.RepeatMin != DefaultRepeatMin || s.Repeat != DefaultRepeatMax || s.Precision != 0.025 {
		t.Errorf("precision alone: repeat %d..%d precision %v", s.RepeatMin, s.Repeat, s.Precision)
	}
	if s := mustParse(t, head+"repeat: 3\nprecision: 5%\n"); s.Adaptive() || s.Repeat != 3 || !s.Precise(IntervalOf([]float64{100, 100, 100})) {
		t.Errorf("a fixed repeat with a precision runs its repeats and judges them: %+v", s)
	}
	for _, tc := range []struct{ src, want string }{
		{"repeat: 2..6\n", "x.yaml:3:1: repeat 2..6 needs precision: P% (how tight each cell's 95 % interval must be before its repeats stop), or give one number"},
		{"repeat: 1..6\nprecision: 5%\n", "x.yaml:3:9: repeat range must start at 2 runs or more (a confidence interval needs two), got 1..6"},
		{"repeat: 6..2\nprecision: 5%\n", "x.yaml:3:9: repeat range must not end below its start, got 6..2"},
		{"repeat: many\n", `x.yaml:3:9: repeat must be a whole number or a range MIN..MAX (like 2..6), got "many"`},
		{"precision: 10\n", `x.yaml:3:12: precision must be a percentage of the mean, like 10%, got "10"`},
		{"precision: 0%\n", "x.yaml:3:12: precision must be above 0% and below 100%, got 0%"},
		{"budget: 0\n", "x.yaml:3:9: budget must be positive, got 0"},
	} {
		_, err := Parse("x.yaml", []byte(head+tc.src))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

func TestIntervalFormula(t *testing.T) {
	// mean 100, s = 10, t(0.975, 2) = 4.302653: ±24.84.
	iv := IntervalOf([]float64{90, 100, 110})
	if iv.N != 3 || iv.Mean != 100 || math.Abs(iv.SD-10) > 1e-12 || math.Abs(iv.Half-4.302653*10/math.Sqrt(3)) > 1e-4 {
		t.Errorf("interval %+v", iv)
	}
	if r := iv.Relative(); math.Abs(r-0.2484) > 1e-4 {
		t.Errorf("relative %v", r)
	}
	if iv := IntervalOf([]float64{5}); !math.IsInf(iv.Half, 1) || !math.IsInf(iv.Relative(), 1) {
		t.Errorf("one run has no interval: %+v", iv)
	}
	if r := IntervalOf([]float64{7, 7}).Relative(); r != 0 {
		t.Errorf("equal runs: relative %v, want 0", r)
	}
	// The runs a cell needs at a coefficient of variation of 10 % for ±10 %: the first n
	// with t(n−1)/√n ≤ 1: t(5)/√6 = 1.050, t(6)/√7 = 0.925.
	s := mustParse(t, adaptiveSrc)
	if n := s.ExpectedRuns(0.1, 100); n != 7 {
		t.Errorf("expected runs at cv 10%%: %d, want 7", n)
	}
	if n := s.ExpectedRuns(10, 50); n != 51 {
		t.Errorf("expected runs beyond the limit: %d, want 51", n)
	}
}

// TestStoppingRuleSynthetic draws each cell's runs from a normal distribution of known
// variance and checks that every cell stops exactly where the interval formula says: at the
// first n ≥ MIN whose interval is within ±P % of its mean, else at MAX.
func TestStoppingRuleSynthetic(t *testing.T) {
	s := mustParse(t, strings.Replace(adaptiveSrc, "repeat: 2..6", "repeat: 2..12", 1))
	cells := s.Cells()
	cv := map[string]float64{}
	for i, c := range cells {
		cv[c.Key] = []float64{0.001, 0.05, 0.12, 0.6}[i] // tight at once … never within 12 runs
	}
	rng := rand.New(rand.NewPCG(1, 2))
	progress := map[string]Progress{}
	for {
		plan := s.Schedule(progress)
		if len(plan) == 0 {
			break
		}
		for _, r := range FirstRound(plan) {
			p := progress[r.Cell.Key]
			p.Values = append(p.Values, 1000*(1+cv[r.Cell.Key]*rng.NormFloat64()))
			p.Done++
			progress[r.Cell.Key] = p
		}
	}
	for _, c := range cells {
		vals := progress[c.Key].Values
		// Where the formula says the cell should have stopped, computed here on its own.
		want := s.Repeat
		for n := s.RepeatMin; n <= s.Repeat; n++ {
			v := vals[:min(n, len(vals))]
			m, ss := 0.0, 0.0
			for _, x := range v {
				m += x
			}
			m /= float64(len(v))
			for _, x := range v {
				ss += (x - m) * (x - m)
			}
			if stats.TQuantile(Confidence, float64(len(v)-1))*math.Sqrt(ss/float64(len(v)-1))/math.Sqrt(float64(len(v))) <= 0.1*m {
				want = n
				break
			}
		}
		if len(vals) != want {
			t.Errorf("cell with cv %v stopped after %d runs, want %d", cv[c.Key], len(vals), want)
		}
	}
	if n := len(progress[cells[0].Key].Values); n != s.RepeatMin {
		t.Errorf("the tight cell ran %d times, want the minimum %d", n, s.RepeatMin)
	}
	if n := len(progress[cells[3].Key].Values); n != s.Repeat {
		t.Errorf("the loose cell ran %d times, want the maximum %d", n, s.Repeat)
	}
}

// TestRoundRobin checks that an adaptive study runs in complete rounds: every unfinished
// cell gets its k-th run before any gets its (k+1)-th, each round in its seeded order, and
// that a study interrupted anywhere and scheduled again continues the same sequence.
func TestRoundRobin(t *testing.T) {
	s := mustParse(t, adaptiveSrc)
	cells := s.Cells()
	cv := map[string]float64{}
	for i, c := range cells {
		cv[c.Key] = []float64{0, 0.3, 0.3, 0.02}[i]
	}
	value := func(key string, n int) float64 { // deterministic: run n of the cell
		return 100 * (1 + cv[key]*math.Sin(float64(n*7+len(key))))
	}
	var seq []Planned
	progress := map[string]Progress{}
	for {
		plan := s.Schedule(progress)
		if len(plan) == 0 {
			break
		}
		round := FirstRound(plan)
		// Within the round: the seeded order of that round, the same as a fixed design's.
		var ranks []uint64
		for _, r := range round {
			ranks = append(ranks, s.rank(r.Repeat, "cell", r.Cell.Key))
		}
		if !slices.IsSorted(ranks) {
			t.Errorf("round %d is not in its seeded order", round[0].Repeat)
		}
		for _, r := range round {
			p := progress[r.Cell.Key]
			p.Done++
			p.Values = append(p.Values, value(r.Cell.Key, p.Done))
			progress[r.Cell.Key] = p
			seq = append(seq, r)
		}
	}
	for i := 1; i < len(seq); i++ {
		if seq[i].Repeat < seq[i-1].Repeat {
			t.Fatalf("run %d is repeat %d after a repeat %d: rounds are not complete", i, seq[i].Repeat, seq[i-1].Repeat)
		}
	}
	if seq[len(seq)-1].Repeat <= s.RepeatMin {
		t.Fatalf("no cell needed more than the minimum: the test does not test rounds (%d runs)", len(seq))
	}
	// Resume after every prefix: the schedule made from what the prefix measured starts
	// with the rest of the sequence's round.
	for k := range seq {
		prog := map[string]Progress{}
		for _, r := range seq[:k] {
			p := prog[r.Cell.Key]
			p.Done++
			p.Values = append(p.Values, value(r.Cell.Key, p.Done))
			prog[r.Cell.Key] = p
		}
		got := FirstRound(s.Schedule(prog))
		end := k
		for end < len(seq) && seq[end].Repeat == seq[k].Repeat {
			end++
		}
		if !slices.Equal(planKeys(got), planKeys(seq[k:end])) {
			t.Errorf("resumed after %d runs: next %v, want %v", k, planKeys(got), planKeys(seq[k:end]))
		}
	}
	// A fixed design scheduled round by round is its Plan.
	fixed := mustParse(t, planSrc)
	var bySteps []Planned
	prog := map[string]Progress{}
	for {
		round := FirstRound(fixed.Schedule(prog))
		if len(round) == 0 {
			break
		}
		for _, r := range round {
			p := prog[r.Cell.Key]
			p.Done++
			prog[r.Cell.Key] = p
		}
		bySteps = append(bySteps, round...)
	}
	if !slices.Equal(planKeys(bySteps), planKeys(fixed.Plan(nil))) {
		t.Error("a fixed design run round by round differs from its plan")
	}
}

// TestBudgetAllot checks that a budget too small for a round goes to the cells whose
// intervals are widest against the precision, cells without an interval first.
func TestBudgetAllot(t *testing.T) {
	s := mustParse(t, adaptiveSrc)
	round := FirstRound(s.Schedule(nil))
	if len(round) != 4 {
		t.Fatalf("round of %d", len(round))
	}
	k := planKeys(round)
	progress := map[string]Progress{
		k[0]: {Values: []float64{100, 101}, Done: 2},     // ±6 %: precise
		k[1]: {Values: []float64{100, 150}, Done: 2},     // ±318 %
		k[2]: {Values: []float64{100}, Done: 1},          // no interval yet
		k[3]: {Values: []float64{100, 120, 80}, Done: 3}, // ±50 %
	}
	cost := func(Cell) time.Duration { return 10 * time.Second }
	for _, tc := range []struct {
		budget time.Duration
		want   []string
	}{
		{time.Hour, k},
		{35 * time.Second, []string{k[1], k[2], k[3]}},
		{25 * time.Second, []string{k[1], k[2]}},
		{15 * time.Second, []string{k[2]}},
		{5 * time.Second, nil},
	} {
		if got := planKeys(s.Allot(round, progress, cost, tc.budget)); !slices.Equal(got, tc.want) {
			t.Errorf("budget %v: %v, want %v", tc.budget, got, tc.want)
		}
	}
	// A run that does not fit is skipped for a cheaper one that does.
	costly := func(c Cell) time.Duration {
		if c.Key == k[2] {
			return time.Minute
		}
		return 10 * time.Second
	}
	if got := planKeys(s.Allot(round, progress, costly, 25*time.Second)); !slices.Equal(got, []string{k[1], k[3]}) {
		t.Errorf("costly cell: %v", got)
	}
}

// TestFixedRepeat: the repeat a fixed design needs is the most any cell needs for its
// measured variation (ExpectedRuns); a cell with fewer than two runs, or one that needs
// more than a thousand, leaves no answer.
func TestFixedRepeat(t *testing.T) {
	s := mustParse(t, adaptiveSrc)
	progress := map[string]Progress{}
	for i, c := range s.Cells() {
		progress[c.Key] = Progress{Values: []float64{100, 100 + float64(i)}, Done: 2}
	}
	want := 0
	for _, c := range s.Cells() {
		iv := progress[c.Key].Interval()
		want = max(want, s.ExpectedRuns(iv.SD/iv.Mean, 1000))
	}
	if n, ok := s.FixedRepeat(progress); !ok || n != want || n < 2 {
		t.Errorf("FixedRepeat = %d, %v; want %d", n, ok, want)
	}
	first := s.Cells()[0].Key
	progress[first] = Progress{Values: []float64{100}, Done: 1}
	if n, ok := s.FixedRepeat(progress); ok {
		t.Errorf("a cell of one run: FixedRepeat = %d", n)
	}
	progress[first] = Progress{Values: []float64{-1000, 1001}, Done: 2}
	if n, ok := s.FixedRepeat(progress); ok {
		t.Errorf("a cell that needs more than a thousand runs: FixedRepeat = %d", n)
	}
	if got := s.Remaining(Progress{Done: 9}); got != 0 {
		t.Errorf("Remaining past the repeats = %d", got)
	}
}
