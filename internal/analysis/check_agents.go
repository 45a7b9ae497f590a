package analysis

import (
	"fmt"

	"github.com/dblat/dblat/internal/results"
)

// RuleAgentPart: a run driven by several agents had a part whose own figures fail the
// client-bound or rtt-uncertain tests: the merged run hides which agent it was.
const RuleAgentPart = "agent-part"

var agentPartRule = rule{names: []string{RuleAgentPart}, check: (*checker).agentParts}

// agentParts judges each agent's part of a run that several agents drove by the rules a run
// of one process meets: its client CPU (client-bound) and how uncertain the RTT its link
// achieved is (rtt-uncertain). A merged run's own figures are sums or upper
// bounds over its parts, so they show that something was off, not on which agent.
func (c *checker) agentParts() {
	for _, sev := range []Severity{Error, Warning} {
		var ids []int64
		var lines []string
		for _, r := range c.fin {
			for _, p := range c.opt.Parts[r.ID] {
				if p.Result == nil {
					continue
				}
				for _, problem := range c.partProblems(p.Result, sev) {
					lines = append(lines, fmt.Sprintf("run %d, agent %s: %s", r.ID, p.Agent, problem))
					if len(ids) == 0 || ids[len(ids)-1] != r.ID {
						ids = append(ids, r.ID)
					}
				}
			}
		}
		if len(ids) == 0 {
			continue
		}
		c.add(Finding{Rule: RuleAgentPart, Severity: sev,
			Message:  "an agent's part of a run failed a test the whole run is held to: the merged figures include what that agent's client or link added",
			Evidence: listed(lines, 8), Runs: ids,
			Fix: "give that agent's machine more CPU or fewer terminals (its link's precise waits also cost CPU), or leave it out with --agents, and rerun"})
	}
}

// partProblems lists what is wrong with one part's figures at severity sev: client CPU at
// or over the warning (Warning) or error (Error) share of its cores; an achieved RTT
// uncertain beyond the RTT tolerance (Error).
func (c *checker) partProblems(r *results.Run, sev Severity) []string {
	var out []string
	if u, ok := clientUse(r); ok {
		if sev == Error && u >= c.opt.ClientCPUError || sev == Warning && u >= c.opt.ClientCPUWarning && u < c.opt.ClientCPUError {
			out = append(out, fmt.Sprintf("client used %s of its %d cores", pct(u), clientCores(r)))
		}
	}
	l := r.Link
	if sev != Error || l == nil {
		return out
	}
	got := AchievedRTT(r)
	if u, tol := RTTUncertainty(r), c.rttTolerance(got); u > tol {
		out = append(out, fmt.Sprintf("its link achieved %s ± %s for %s requested (tolerance %s)", fmtDur(got), fmtDur(u), fmtDur(r.Params.RTT), fmtDur(tol)))
	}
	return out
}
