package analysis

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/words"
)

// RuleRTT: runs that asked for added RTT record no link (an error), record no measurement
// of what it added (a warning), or achieved an RTT other than the one requested by more
// than the tolerance (a note: figures are placed at the RTT achieved, AchievedRTT).
const RuleRTT = "rtt-off"

var rttRule = rule{names: []string{RuleRTT}, check: (*checker).rtt}

// RuleRTTUncertain: the RTT a run achieved is uncertain by more than the tolerance
// (RTTUncertainty): too few delayed chunks, spread too wide, to fix the mean lateness that
// places the run on the RTT axis, so the point may not stand for what the transactions
// waited on average.
const RuleRTTUncertain = "rtt-uncertain"

var rttUncertainRule = rule{names: []string{RuleRTTUncertain}, check: (*checker).rttUncertain}

// RuleLinkCPU: the latency link's own timing took a large share of a CPU during the
// window: CPU the database server on the same machine could have used.
const RuleLinkCPU = "link-cpu"

var linkCPURule = rule{names: []string{RuleLinkCPU}, check: (*checker).linkCPU}

// rtt flags runs whose link was not recorded or not measured, and notes those whose achieved
// RTT is off the request: they are placed at the RTT achieved, which their tables' level
// names do not say.
func (c *checker) rtt() {
	type lvl struct {
		ids      []int64
		min, max time.Duration
	}
	off := map[time.Duration]*lvl{}
	var uncal, nolink []int64
	for _, r := range c.fin {
		l := r.Link
		if l == nil {
			if r.Params.RTT > 0 {
				nolink = append(nolink, r.ID)
			}
			continue
		}
		if l.Samples <= 0 && lateN(l.LatenessUp)+lateN(l.LatenessDown) == 0 {
			uncal = append(uncal, r.ID)
			continue
		}
		want, got := r.Params.RTT, AchievedRTT(r)
		if tol := c.rttTolerance(want); got-want <= tol && got-want >= -tol {
			continue
		}
		v := off[want]
		if v == nil {
			v = &lvl{min: got, max: got}
			off[want] = v
		}
		v.ids = append(v.ids, r.ID)
		v.min, v.max = min(v.min, got), max(v.max, got)
	}
	if len(off) > 0 {
		levels := make([]time.Duration, 0, len(off))
		for k := range off {
			levels = append(levels, k)
		}
		slices.Sort(levels)
		var ids []int64
		var lines []string
		for _, want := range levels {
			v := off[want]
			ids = append(ids, v.ids...)
			got := fmtDur(v.min)
			if v.max != v.min {
				got += "–" + fmtDur(v.max)
			}
			lines = append(lines, fmt.Sprintf("requested %s, achieved %s (tolerance ±%s) in %s (%s)",
				fmtDur(want), got, fmtDur(c.rttTolerance(want)), words.Count(len(v.ids), "run"), idList(v.ids, 8)))
		}
		c.add(Finding{Rule: RuleRTT, Severity: Info,
			Message:  "the link added another RTT than requested (the request plus its release lateness during the window): charts, knees and the latency model place these runs at the RTT achieved; tables name them by the request",
			Evidence: strings.Join(lines, "; "), Runs: ids,
			Fix: "read the achieved RTT beside the requested one; to bring them together give the client CPU (see client-bound) and keep the CPUs out of deep idle states"})
	}
	if len(nolink) > 0 {
		c.add(Finding{Rule: RuleRTT, Severity: Error,
			Message:  "runs that asked for added RTT record no latency link: nothing shows that the delay was added",
			Evidence: fmt.Sprintf("%s (%s)", words.Count(len(nolink), "run"), idList(nolink, 8)), Runs: nolink,
			Fix: "rerun with a dblat that records the link"})
	}
	if len(uncal) > 0 {
		c.add(Finding{Rule: RuleRTT, Severity: Warning,
			Message:  "nothing measured what the link added in these runs (no calibration, no lateness): the RTT actually added is unknown",
			Evidence: fmt.Sprintf("%s (%s)", words.Count(len(uncal), "run"), idList(uncal, 8)), Runs: uncal,
			Fix: "rerun with a dblat that calibrates the link and records its lateness (the default of `dblat run` and `dblat study run`)"})
	}
}

// rttUncertain flags runs whose achieved RTT is uncertain by more than the tolerance
// (RTTUncertainty). How late the link was is no error by itself (the run is placed at the
// RTT achieved, and rtt-off notes how far that is from the request); not knowing where to
// place it is.
func (c *checker) rttUncertain() {
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		l := r.Link
		if l == nil || lateN(l.LatenessUp)+lateN(l.LatenessDown) == 0 {
			continue
		}
		got, u := AchievedRTT(r), RTTUncertainty(r)
		tol := c.rttTolerance(got)
		if u <= tol {
			continue
		}
		ids = append(ids, r.ID)
		lines = append(lines, fmt.Sprintf("run %d: rtt %s achieved %s ± %s (release lateness p50/mean/p90/max up %s, down %s; tolerance %s)", r.ID,
			fmtDur(r.Params.RTT), fmtDur(got), fmtDur(u), latePart(l.LatenessUp), latePart(l.LatenessDown), fmtDur(tol)))
	}
	if len(ids) == 0 {
		return
	}
	c.add(Finding{Rule: RuleRTTUncertain, Severity: Error,
		Message:  "the RTT these runs achieved is uncertain by more than the tolerance: the link delayed too few chunks, with too wide a spread of lateness, to fix the mean lateness that places them on the RTT axis (the standard error of the mean, bounded by the largest lateness)",
		Evidence: listed(lines, 8), Runs: ids,
		Fix: "lengthen the window so that more round trips are delayed, give the client CPU (fewer terminals, a separate client machine) and hold the CPUs out of deep idle states (the default where permitted; see --no-cpu-latency-hold), and rerun"})
}

func latePart(l *results.Lateness) string {
	if lateN(l) == 0 {
		return "–"
	}
	return fmtDur(l.P50) + "/" + fmtDur(l.Mean) + "/" + fmtDur(l.P90) + "/" + fmtDur(l.Max) + " of " + strconv.FormatInt(l.N, 10)
}

// linkCPU flags runs whose latency link used more than a quarter of a CPU for its timing
// during the window.
func (c *checker) linkCPU() {
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		el := r.Summary.Elapsed.Seconds()
		if r.Link == nil || r.Link.CPUSeconds <= 0 || el <= 0 {
			continue
		}
		share := r.Link.CPUSeconds / el
		if share < linkCPUWarning {
			continue
		}
		ids = append(ids, r.ID)
		line := fmt.Sprintf("run %d: %.2f CPU-s in %.1f s = %.2f CPUs", r.ID, r.Link.CPUSeconds, el, share)
		if done := r.Summary.Committed + r.Summary.Rollbacks; done > 0 {
			line += fmt.Sprintf(", %.1f µs per transaction", r.Link.CPUSeconds/float64(done)*1e6)
		}
		lines = append(lines, line)
	}
	if len(ids) == 0 {
		return
	}
	c.add(Finding{Rule: RuleLinkCPU, Severity: Warning,
		Message:  fmt.Sprintf("the latency link's timing took more than %.2f of a CPU during the window: CPU a server on the same machine could have used, so the figures may understate it", linkCPUWarning),
		Evidence: listed(lines, 8), Runs: ids,
		Fix: "hold the CPUs out of deep idle states (the default where permitted), which lets the link wait without busy-waiting, or run the server on another machine"})
}

// linkCPUWarning is the link's timing CPU, in CPUs over the window, above which RuleLinkCPU
// warns: a quarter of one of the two cores of the machines dblat was tuned on.
const linkCPUWarning = 0.25
