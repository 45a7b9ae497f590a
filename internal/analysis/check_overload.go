package analysis

import (
	"fmt"

	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/words"
)

// RuleOverload: open-loop runs that did not sustain their offered rate (arrivals skipped
// or left unstarted: results.IsOverload). Their response times measure a growing
// backlog; a cell that mixes them with runs that kept the rate averages two regimes.
const RuleOverload = "overload"

var overloadRule = rule{names: []string{RuleOverload}, check: (*checker).overload}

// overload flags open-loop runs that did not sustain their offered rate, and cells that
// average such runs with runs that did.
func (c *checker) overload() {
	var ids []int64
	var lines []string
	for _, r := range c.fin {
		if !r.Params.OpenLoop() || !r.Summary.Overload {
			continue
		}
		ids = append(ids, r.ID)
		lines = append(lines, fmt.Sprintf("run %d (%s): offered %s/s, achieved %.1f/s; %d of %d arrivals skipped, %d not started by the window's end",
			r.ID, orAll(c.cellOf(r)), spec.FormatRate(r.Params.Rate), r.Summary.AchievedRate, r.Summary.Skipped, r.Summary.Offered, r.Summary.Backlog))
	}
	if len(ids) == 0 {
		return
	}
	verb := " are each"
	if len(ids) == 1 {
		verb = " is"
	}
	c.add(Finding{Rule: RuleOverload, Severity: Warning,
		Message:  fmt.Sprintf("%s an overload point: the offered rate was not sustained, so the response times measure a backlog that grows through the window (they depend on its length), not the server at that rate; reports mark these points instead of reading them as part of the curve", words.Count(len(ids), "open-loop run")+verb),
		Evidence: listed(lines, 8), Runs: ids,
		Fix: "lower the rate or add terminals to find where the rate is still sustained (the saturation point); with --latency-limit the backlog stays bounded and the skipped arrivals are counted"})
	// A cell whose repeats disagree on it averages two regimes.
	var cells, mixed []string
	var mids []int64
	for _, cl := range c.g.Cells {
		over := 0
		for _, r := range cl.Finished {
			if r.Params.OpenLoop() && r.Summary.Overload {
				over++
			}
		}
		if over > 0 && over < len(cl.Finished) {
			cells = append(cells, cl.Key)
			mids = append(mids, cl.FinishedIDs()...)
			mixed = append(mixed, fmt.Sprintf("%s: %d of %d finished runs are overload points", orAll(cl.Key), over, len(cl.Finished)))
		}
	}
	if len(cells) > 0 {
		c.add(Finding{Rule: RuleOverload, Severity: Error,
			Message:  "some repeats of a cell kept the offered rate and others did not: the cell's mean averages a sustained load with a growing backlog",
			Evidence: listed(mixed, 8), Runs: mids, Cells: cells,
			Fix: "the cell sits at the saturation point: read its runs apart, or move the rate away from it"})
	}
}
