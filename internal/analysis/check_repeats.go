package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dblat/dblat/internal/disturb"
	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/stats"
	"github.com/dblat/dblat/internal/words"
)

// RuleFewRepeats: cells with fewer finished repeats than needed (seed 000: five).
const RuleFewRepeats = "few-repeats"

var fewRepeatsRule = rule{names: []string{RuleFewRepeats}, check: (*checker).repeats}

// RuleVariation: repeats of a cell disagree (coefficient of variation above MaxCV).
const RuleVariation = "repeat-variation"

var variationRule = rule{names: []string{RuleVariation}, check: (*checker).variation}

// repeats flags cells with fewer finished repeats than needed.
func (c *checker) repeats() {
	need := c.opt.MinRepeats
	if c.opt.Repeat > 0 && c.opt.Repeat < c.opt.MinRepeats {
		need = c.opt.Repeat
		asks, evidence := words.Count(c.opt.Repeat, "repeat")+" per cell", fmt.Sprintf("repeat: %d", c.opt.Repeat)
		if c.opt.RepeatMax > c.opt.Repeat {
			asks = fmt.Sprintf("%d to %d repeats per cell (%d where the interval is tight by then)", c.opt.Repeat, c.opt.RepeatMax, c.opt.Repeat)
			evidence = fmt.Sprintf("repeat: %d..%d", c.opt.Repeat, c.opt.RepeatMax)
		}
		c.add(Finding{Rule: RuleFewRepeats, Severity: Info,
			Message:  fmt.Sprintf("the study asks for %s, fewer than %d: differences smaller than the noise cannot be told apart (seed 000: \"each test configuration is run at least five times\")", asks, c.opt.MinRepeats),
			Evidence: evidence,
			Fix:      fmt.Sprintf("set repeat: %d or more for figures to quote", c.opt.MinRepeats)})
	}
	var cells, lines []string
	var ids []int64
	for _, cl := range c.g.Cells {
		if len(cl.Finished) >= need {
			continue
		}
		cells = append(cells, cl.Key)
		for _, r := range cl.Runs {
			ids = append(ids, r.ID)
		}
		line := fmt.Sprintf("%s: %d finished", orAll(cl.Key), len(cl.Finished))
		if n := len(cl.Runs) - len(cl.Finished); n > 0 {
			line += fmt.Sprintf(" (%d failed, aborted or running)", n)
		}
		lines = append(lines, line)
	}
	if len(cells) == 0 {
		return
	}
	c.add(Finding{Rule: RuleFewRepeats, Severity: Warning,
		Message:  fmt.Sprintf("%s fewer than %s: their means have wide or no confidence intervals (seed 000 runs every configuration at least five times)", cellsHave(len(cells)), words.Count(need, "finished repeat")),
		Evidence: listed(lines, 8), Runs: ids, Cells: cells,
		Fix: fmt.Sprintf("run the study again: `dblat study run` resumes and adds the missing repeats (%d per cell)", need)})
}

func cellsHave(n int) string {
	if n == 1 {
		return "1 cell has"
	}
	return fmt.Sprintf("%d cells have", n)
}

// variation flags cells whose repeats disagree by more than MaxCV.
func (c *checker) variation() {
	var cells, lines []string
	var ids []int64
	slowHost, disturbed := 0, 0
	for _, cl := range c.g.Cells {
		if len(cl.Finished) < 2 {
			continue
		}
		xs := make([]float64, len(cl.Finished))
		for i, r := range cl.Finished {
			xs[i] = results.MetricValue(r, c.g.metric)
		}
		m, sd := stats.MeanSD(xs)
		// Counting alone makes repeats differ: a window that counted k transactions has a
		// relative standard deviation of 1/√k (Poisson). Repeats disagree when they differ
		// by more than MaxCV and by more than twice what counting explains.
		counted := 0.0
		for _, r := range cl.Finished {
			counted += counts(r, c.g.metric)
		}
		counting := math.Inf(1)
		if counted > 0 {
			counting = 1 / math.Sqrt(counted/float64(len(cl.Finished)))
		}
		if m <= 0 || sd/m <= c.opt.MaxCV || sd/m <= 2*counting {
			continue
		}
		cells = append(cells, cl.Key)
		ids = append(ids, cl.FinishedIDs()...)
		vals := make([]string, len(xs))
		for i, x := range xs {
			vals[i] = strconv.FormatFloat(round(x, 1), 'f', -1, 64)
		}
		line := fmt.Sprintf("%s: %s CV %s over runs %s (%s; counting alone explains %s)", orAll(cl.Key), c.g.metric, pct(sd/m),
			idList(cl.FinishedIDs(), 10), strings.Join(vals, ", "), pct(counting))
		if d := disturbedRuns(cl.Finished); d != "" {
			line += "; " + d
			disturbed++
		}
		if st, ok := hostBehind(cl.Finished, xs); ok {
			line += "; " + st
			slowHost++
		}
		lines = append(lines, line)
	}
	if len(cells) == 0 {
		return
	}
	fix := "look for what changed between the repeats (background load, checkpoints, a cold cache: see warm-up), lengthen the window, or add repeats"
	if slowHost > 0 {
		fix = "the machine itself was slower during the slower repeats (a busy virtual machine host, a lower clock): rerun when it is quiet, on a dedicated host, or with more repeats, so that the mean averages over it; " + fix
	}
	if disturbed > 0 {
		fix = "what disturbed the runs is named above (see the disturbed finding): run the study with disturbed: rerun, on a quieter machine, or with the data directory in memory (server storage: memory) when the question is not the disk; " + fix
	}
	c.add(Finding{Rule: RuleVariation, Severity: Warning,
		Message:  fmt.Sprintf("repeats of %s disagree by more than %s (coefficient of variation): the mean hides an unstable measurement", words.Count(len(cells), "cell"), pct(c.opt.MaxCV)),
		Evidence: listed(lines, 8), Runs: ids, Cells: cells, Fix: fix})
}

// disturbedRuns says what disturbed each of runs that a disturbance was found in: "run 4:
// the host's disk took 1.1 s"; "" when none was.
func disturbedRuns(runs []*results.Run) string {
	var parts []string
	for _, r := range runs {
		if w := whatDisturbed(r); w != "" {
			parts = append(parts, fmt.Sprintf("run %d: %s", r.ID, w))
		}
	}
	return strings.Join(parts, ", ")
}

// hostBehind says what shows that the machine, not the system under test, changed between
// runs, whose metric values are xs: the steal time of its hypervisor (stealBehind), or else
// dblat's own CPU per transaction (clientCPUBehind). ok is false when neither does.
func hostBehind(runs []*results.Run, xs []float64) (string, bool) {
	if len(runs) < 2 {
		return "", false
	}
	if st, ok := canaryBehind(runs, xs); ok {
		return st, true
	}
	if st, ok := stealBehind(runs, xs); ok {
		return st, true
	}
	return clientCPUBehind(runs, xs)
}

// canaryBehind says how fast the machine itself ran in each of runs when that plausibly
// explains why they differ: the CPU time a fixed piece of work took (results.Client.
// CanaryUs) was at least disturb.SlowHostMargin longer in the slowest run than in the
// fastest. ok is false otherwise, or when not measured.
func canaryBehind(runs []*results.Run, xs []float64) (string, bool) {
	c := make([]float64, len(runs))
	parts := make([]string, len(runs))
	for i, r := range runs {
		if r.Client.CanaryUs <= 0 {
			return "", false
		}
		c[i] = r.Client.CanaryUs
		parts[i] = strconv.FormatFloat(c[i], 'f', 0, 64)
	}
	slow, fast := extremes(xs)
	if c[slow] < (1+disturb.SlowHostMargin)*c[fast] {
		return "", false
	}
	return fmt.Sprintf("a fixed piece of work took %s µs of CPU in these runs: %s more in the slowest, so the machine itself ran slower (a neighbour on its host, a lower clock)",
		strings.Join(parts, ", "), pct(c[slow]/c[fast]-1)), true
}

// extremes returns the indexes of the smallest and largest of vs, which is not empty.
func extremes(vs []float64) (lo, hi int) {
	for i, v := range vs {
		if v < vs[lo] {
			lo = i
		}
		if v > vs[hi] {
			hi = i
		}
	}
	return lo, hi
}

// stealBehind says how much CPU the client machine's hypervisor took (steal) during each of
// runs (at least two) when that plausibly explains why they differ: the steal differs by at least one
// percentage point between them, and the run with the most is slower than the one with the
// least. ok is false otherwise, or when not measured.
func stealBehind(runs []*results.Run, xs []float64) (string, bool) {
	steal := make([]float64, len(runs))
	parts := make([]string, len(runs))
	for i, r := range runs {
		if r.Client.Steal == nil {
			return "", false
		}
		steal[i] = *r.Client.Steal
		parts[i] = fmt.Sprintf("%.1f", 100*steal[i])
	}
	lo, hi := extremes(steal)
	if steal[hi]-steal[lo] < 0.01 || xs[hi] >= xs[lo] {
		return "", false
	}
	return fmt.Sprintf("the machine's hypervisor took %s %% of its CPU time (steal) in these runs", strings.Join(parts, ", ")), true
}

// clientCPUBehind says how much CPU dblat itself spent per transaction in each of runs when
// the slowest run spent at least 20 % more than the fastest: the client does the same work
// for every transaction, so that is a machine whose CPUs ran slower (a neighbour's load on
// the host's caches and memory, a lower clock), which slows the server on it too. ok is
// false otherwise, or when not measured.
func clientCPUBehind(runs []*results.Run, xs []float64) (string, bool) {
	perTx := make([]float64, len(runs))
	parts := make([]string, len(runs))
	for i, r := range runs {
		done := r.Summary.Committed + r.Summary.Rollbacks
		if done == 0 || r.Client.CPUSeconds <= 0 {
			return "", false
		}
		perTx[i] = r.Client.CPUSeconds / float64(done) * 1e6
		parts[i] = strconv.FormatFloat(perTx[i], 'f', 0, 64)
	}
	slow, fast := extremes(xs)
	if perTx[slow] < 1.2*perTx[fast] {
		return "", false
	}
	return fmt.Sprintf("dblat's own CPU per transaction was %s µs in these runs: the same client work cost %s more in the slowest, which points at the machine, not the server",
		strings.Join(parts, ", "), pct(perTx[slow]/perTx[fast]-1)), true
}

// counts is how many transactions a run's metric counted in its window: New-Orders for
// NOPM, every completed transaction for TPS.
func counts(r *results.Run, metric string) float64 {
	return results.MetricValue(r, metric) * r.Summary.Elapsed.Seconds() / metricSeconds(metric)
}

// metricSeconds is the time unit of a metric: 60 for per-minute figures, else 1.
func metricSeconds(metric string) float64 {
	if metric == results.MetricNOPM {
		return 60
	}
	return 1
}
