package analysis

import (
	"fmt"
	"math"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/stats"
	"github.com/dblat/dblat/internal/words"
)

// RuleWarmup: no warm-up, or one too short for the window to start in steady state
// (measured from the run's samples where it has them).
const RuleWarmup = "warmup"

var warmupRule = rule{names: []string{RuleWarmup}, check: (*checker).warmup}

// warmup flags runs with no warm-up, and runs whose window did not start in steady state.
// Where a run's per-second samples are at hand, that is measured: the throughput of the
// window's first part (max(2 s, 10 % of the window)) against the rest, flagged when it is
// more than 10 % lower and the shortfall is beyond chance: 3 standard deviations of the
// difference, with the second-to-second noise the cell's windows showed (at least a
// Poisson count's; see steady) — unless the warm-up's last seconds already ran at the
// rest's pace, by the same test: a dip after throughput had settled is not a warm-up too
// short. Without samples it falls back to a rule of thumb: a warm-up
// shorter than max(MinWarmup, MinWarmupFraction × window); an automatic warm-up (warmup:
// auto), which the run's own samples ended, only when it reached its ceiling. The warm-up
// judged is the one the run had (results.Run.WarmupHad).
func (c *checker) warmup() {
	var none, short []int64
	var shortLines []string
	seen := map[string]bool{}
	note := func(id int64, line string) {
		short = append(short, id)
		if !seen[line] {
			seen[line] = true
			shortLines = append(shortLines, line)
		}
	}
	measured := false
	windows := map[int64]window{} // by run ID, for the runs whose windows split
	for _, r := range c.fin {
		if ws, ok := windowStart(r); ok {
			windows[r.ID] = ws
		}
	}
	dispersion := map[int64]float64{} // by run ID
	for _, cl := range c.g.Cells {
		var ws []window
		for _, r := range cl.Finished {
			if w, ok := windows[r.ID]; ok {
				ws = append(ws, w)
			}
		}
		phi := restDispersion(ws)
		for _, r := range cl.Finished {
			dispersion[r.ID] = phi
		}
	}
	for _, r := range c.fin {
		// The warm-up the run had: an automatic one (warmup: auto) ended when throughput
		// was steady, or at its ceiling.
		w, d, auto := r.WarmupHad(), r.Params.Duration, r.Params.WarmupAuto
		what := fmtDur(w)
		if auto {
			// It ends on a second's tick: the microseconds after it say nothing.
			what = fmtDur(w.Round(100*time.Millisecond)) + " automatic"
		}
		if w <= 0 {
			none = append(none, r.ID)
			continue
		}
		if ws, ok := windows[r.ID]; ok {
			first, rest, span := ws.first, ws.rest, ws.span
			measured = true
			phi := max(1, dispersion[r.ID])
			if steady(ws, phi) {
				continue
			}
			if ws.nBefore > 0 && steady(window{first: ws.before, rest: ws.rest, span: ws.span, restSeconds: ws.restSeconds}, phi) {
				// The last seconds of the warm-up already ran at the rest's pace: the
				// window's start dipped (a checkpoint, the host) after throughput had
				// settled, which a longer warm-up would not have changed. The dip stays
				// in the run's figures, for the variation rules to judge.
				continue
			}
			note(r.ID, fmt.Sprintf("run %d: after a %s warm-up the window's first %s ran at %s of the rest", r.ID, what, fmtDur(span),
				pct(first/rest)))
			continue
		}
		if auto {
			// Without samples, the rule of thumb does not judge what the steady-state rule
			// chose from the run's own samples; a warm-up cut off at its ceiling it flags.
			if w >= r.Params.Warmup {
				note(r.ID, fmt.Sprintf("run %d: the automatic warm-up reached its ceiling of %s before throughput was steady", r.ID, fmtDur(r.Params.Warmup)))
			}
			continue
		}
		need := max(c.opt.MinWarmup, time.Duration(c.opt.MinWarmupFraction*float64(d)))
		if w < need {
			note(r.ID, fmt.Sprintf("warm-up %s before a %s window (at least %s wanted)", fmtDur(w), fmtDur(d), fmtDur(need)))
		}
	}
	if len(none) > 0 {
		c.add(Finding{Rule: RuleWarmup, Severity: Warning,
			Message:  "runs without warm-up: connection set-up, first use of every statement (an extra round trip each in pgx's cache mode, engines.md §6 item 9) and cold caches fall into the measured window",
			Evidence: fmt.Sprintf("warm-up 0 in %s (%s)", words.Count(len(none), "run"), idList(none, 8)), Runs: none,
			Fix: fmt.Sprintf("use a warm-up of at least %s (dblat run's default)", fmtDur(c.opt.MinWarmup))})
	}
	if len(short) > 0 {
		msg := "warm-up too short for the caches to fill and the statements to be prepared before the window starts: the first seconds of the window are not steady state"
		if measured {
			msg = "the window did not start in steady state: its first seconds ran measurably slower than the rest, so the warm-up was too short for the caches to fill and the statements to be prepared"
		}
		c.add(Finding{Rule: RuleWarmup, Severity: Warning, Message: msg,
			Evidence: listed(shortLines, 4) + fmt.Sprintf(" in %s (%s)", words.Count(len(short), "run"), idList(short, 8)), Runs: short,
			Fix: fmt.Sprintf("lengthen the warm-up (at least %s, and at least %s of the window, is a safe rule of thumb)", fmtDur(c.opt.MinWarmup), pct(c.opt.MinWarmupFraction))})
	}
}

// window is a run's window split into its first part — max(2 s, 10 % of the window) — and
// the rest, from its per-second samples (all types, Type ""): the transactions each part
// completed, scaled to the first part's number of seconds (first, rest), the first part's
// length (span), how many seconds the rest had (restSeconds), and the rest's per-second
// counts (perSecond). before is what the last nBefore seconds of the warm-up completed,
// as many as the first part has; nBefore is 0 when the run has fewer warm-up samples.
type window struct {
	first, rest float64
	span        time.Duration
	restSeconds int
	perSecond   []float64
	before      float64
	nBefore     int
}

// windowStart splits r's window (see window). Only samples whose second lies inside the
// window count: the one that ends just after the window starts is mostly warm-up, and the
// last one also holds the transactions that were in flight when the window ended. ok is
// false without at least four such samples.
func windowStart(r *results.Run) (w window, ok bool) {
	el := r.Summary.Elapsed
	span := max(2*time.Second, el/10)
	if el < 2*span {
		return window{}, false
	}
	var nFirst int
	var warm []float64 // the warm-up's seconds, in order
	for _, s := range r.Samples {
		if s.Type == "" && s.Offset < time.Second-time.Second/10 {
			warm = append(warm, float64(s.Committed))
		}
		if s.Type != "" || s.Offset < time.Second-time.Second/10 || s.Offset > el {
			continue
		}
		if s.Offset <= span+time.Second/10 {
			w.first += float64(s.Committed)
			nFirst++
		} else {
			w.rest += float64(s.Committed)
			w.perSecond = append(w.perSecond, float64(s.Committed))
		}
	}
	w.restSeconds = len(w.perSecond)
	if nFirst+w.restSeconds < 4 || nFirst == 0 || w.restSeconds == 0 || w.rest <= 0 {
		return window{}, false
	}
	// Rates per sampled second, so the parts compare whatever their number of samples.
	w.rest *= float64(nFirst) / float64(w.restSeconds)
	w.span = time.Duration(nFirst) * time.Second
	if len(warm) >= nFirst {
		for _, n := range warm[len(warm)-nFirst:] {
			w.before += n
		}
		w.nBefore = nFirst
	}
	return w, true
}

// restDispersion is how much more the per-second counts of windows (past their first
// part) vary than Poisson counts would: the variance of each window's per-second counts
// over their mean, pooled over the windows by degrees of freedom. A server sharing two busy
// vCPUs varies well beyond counting, and a test against Poisson noise alone would take that
// for a slow start. It is 0 when no window has two such seconds.
func restDispersion(windows []window) float64 {
	var sum, df float64
	for _, w := range windows {
		if len(w.perSecond) < 2 {
			continue
		}
		m, sd := stats.MeanSD(w.perSecond)
		if m <= 0 {
			continue
		}
		k := float64(len(w.perSecond) - 1)
		sum += k * sd * sd / m
		df += k
	}
	if df == 0 {
		return 0
	}
	return sum / df
}

// steady reports whether the first part of a window is in keeping with the rest: not more
// than 10 % below it, or within 3 standard deviations of the difference of the two counts.
// A count's variance is its value (Poisson) times phi, the dispersion the cell's windows
// showed (restDispersion, at least 1); the rest, scaled from its seconds to the first
// part's, has its variance scaled by the square of that factor.
func steady(w window, phi float64) bool {
	if w.first >= 0.9*w.rest {
		return true
	}
	scale := w.span.Seconds() / float64(w.restSeconds)
	return w.rest-w.first <= 3*math.Sqrt(phi*(w.first+scale*w.rest))
}
