package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dblat/dblat/internal/results"
)

// RuleRTT: the achieved RTT differs from the requested one by more than the tolerance,
// or was not measured.
const RuleRTT = "rtt-off"

var rttRule = rule{names: []string{RuleRTT}, check: (*checker).rtt}

// RuleLinkLate: during the run, the latency link released data later than the RTT
// tolerance (its in-run lateness, up and down at p50, added up).
const RuleLinkLate = "link-late"

var linkLateRule = rule{names: []string{RuleLinkLate}, check: (*checker).linkLate}

// RuleLinkCPU: the latency link's own timing took a large share of a CPU during the
// window: CPU the database server on the same machine could have used.
const RuleLinkCPU = "link-cpu"

var linkCPURule = rule{names: []string{RuleLinkCPU}, check: (*checker).linkCPU}

// rtt flags runs whose link did not add the RTT asked for, or was not measured.
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
		if l.Samples <= 0 {
			uncal = append(uncal, r.ID)
			continue
		}
		want := l.RTT
		if r.Params.RTT != want {
			want = r.Params.RTT
		}
		tol := c.rttTolerance(want)
		d := l.AchievedP50 - want
		if d <= tol && d >= -tol {
			continue
		}
		v := off[want]
		if v == nil {
			v = &lvl{min: l.AchievedP50, max: l.AchievedP50}
			off[want] = v
		}
		v.ids = append(v.ids, r.ID)
		v.min, v.max = min(v.min, l.AchievedP50), max(v.max, l.AchievedP50)
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
			tol := c.rttTolerance(want)
			got := fmtDur(v.min)
			if v.max != v.min {
				got += "–" + fmtDur(v.max)
			}
			lines = append(lines, fmt.Sprintf("requested %s, achieved %s (tolerance ±%s) in %s (%s)",
				fmtDur(want), got, fmtDur(tol), plural(len(v.ids), "run"), idList(v.ids, 8)))
		}
		c.add(Finding{Rule: RuleRTT, Severity: Error,
			Message:  "the link did not add the RTT requested: the calibrated median differs from the request by more than the tolerance, so cells named by their requested RTT were measured at another",
			Evidence: strings.Join(lines, "; "), Runs: ids,
			Fix: "compare cells at their achieved RTT (the report's charts, knees and latency model place them there; its tables name them by the request), or find what delays the link (a CPU-starved client: see client-bound; timer precision) and rerun"})
	}
	if len(nolink) > 0 {
		c.add(Finding{Rule: RuleRTT, Severity: Error,
			Message:  "runs that asked for added RTT record no latency link: nothing shows that the delay was added",
			Evidence: fmt.Sprintf("%s (%s)", plural(len(nolink), "run"), idList(nolink, 8)), Runs: nolink,
			Fix: "rerun with a dblat that records the link"})
	}
	if len(uncal) > 0 {
		c.add(Finding{Rule: RuleRTT, Severity: Warning,
			Message:  "the link was not calibrated before these runs: the RTT actually added is unknown",
			Evidence: fmt.Sprintf("%s (%s)", plural(len(uncal), "run"), idList(uncal, 8)), Runs: uncal,
			Fix: "rerun with calibration (the default of `dblat run` and `dblat study run`)"})
	}
}

// linkLate flags runs whose link released data late during the run itself: the up and
// down lateness at p50 added up exceed the RTT tolerance. The calibration before a run
// measures an idle machine; this is what the run's own traffic met.
func (c *checker) linkLate() {
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		l := r.Link
		if l == nil || l.LatenessUp == nil && l.LatenessDown == nil {
			continue
		}
		late := linkLateness(l)
		tol := c.rttTolerance(l.RTT)
		if late <= tol {
			continue
		}
		ids = append(ids, r.ID)
		lines = append(lines, fmt.Sprintf("run %d: rtt %s released %s late at p50 (up %s, down %s; tolerance %s)", r.ID,
			fmtDur(l.RTT), fmtDur(late), latePart(l.LatenessUp), latePart(l.LatenessDown), fmtDur(tol)))
	}
	if len(ids) == 0 {
		return
	}
	c.add(Finding{Rule: RuleLinkLate, Severity: Error,
		Message:  "during the run the latency link released data later than the RTT tolerance: the RTT the terminals met was larger than the one requested and calibrated",
		Evidence: listed(lines, 8), Runs: ids,
		Fix: "give the client CPU (fewer terminals, a separate client machine), hold the CPUs out of deep idle states (the default where permitted; see --no-cpu-latency-hold), and rerun"})
}

func latePart(l *results.Lateness) string {
	if l == nil {
		return "–"
	}
	return fmtDur(l.P50)
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
