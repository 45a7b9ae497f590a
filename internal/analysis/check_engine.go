package analysis

import (
	"fmt"
	"math"

	"github.com/dblat/dblat/internal/engine"
)

// RuleConflicts: runs with many conflicts on a server whose configuration the engine
// knows to cause them (seed 002: Firebird 4's ReadConsistency restarting statements).
const RuleConflicts = "conflicts"

var conflictsRule = rule{names: []string{RuleConflicts}, check: (*checker).conflicts}

// RuleClassicBuffers: Firebird Classic or SuperClassic with more than 2048 page buffers
// per connection (seed 002). The Firebird engine finds it (Comparison.Advise), as every
// engine finds its own rules; engine advice reports them all.
const RuleClassicBuffers = "fb-classic-buffers"

var engineAdviceRule = rule{names: []string{RuleClassicBuffers}, check: (*checker).engineAdvice}

// conflicts asks each run's engine for the cause of a high conflict rate
// (Comparison.Conflicts): runs whose retryable errors reach ErrorRateWarning of their
// completed transactions.
func (c *checker) conflicts() {
	type group struct {
		adv   engine.Advice
		ids   []int64
		lines []string
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range c.fin {
		explain := comparison(r.Server.Engine).Conflicts
		done := r.Summary.Committed + r.Summary.Rollbacks
		n := r.Summary.Errors[engine.ClassRetryable.String()]
		if explain == nil || n == 0 {
			continue
		}
		rate := math.Inf(1)
		if done > 0 {
			rate = float64(n) / float64(done)
		}
		if rate < c.opt.ErrorRateWarning {
			continue
		}
		a, ok := explain(r.Server.Version, r.Server.Settings)
		if !ok {
			continue
		}
		g, seen := groups[a.Rule]
		if !seen {
			g = &group{adv: a}
			groups[a.Rule] = g
			order = append(order, a.Rule)
		}
		g.ids = append(g.ids, r.ID)
		g.lines = append(g.lines, fmt.Sprintf("run %d: %s conflicts per completed transaction (%d of %d); %s", r.ID, pct(rate), n, done, a.Detail))
	}
	for _, rule := range order {
		g := groups[rule]
		c.add(Finding{Rule: RuleConflicts, Severity: Warning, Message: g.adv.Message, Evidence: listed(g.lines, 8), Runs: g.ids, Fix: g.adv.Fix})
	}
}

// engineAdvice adds the engines' own findings about each run's settings
// (Comparison.Advise), grouped by rule.
func (c *checker) engineAdvice() {
	type group struct {
		adv   engine.Advice
		ids   []int64
		lines []string
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range c.fin {
		advise := comparison(r.Server.Engine).Advise
		if advise == nil {
			continue
		}
		for _, a := range advise(r.Server.Settings, concurrency(&r.Params)) {
			g, ok := groups[a.Rule]
			if !ok {
				g = &group{adv: a}
				groups[a.Rule] = g
				order = append(order, a.Rule)
			}
			g.ids = append(g.ids, r.ID)
			g.lines = append(g.lines, fmt.Sprintf("run %d: %s", r.ID, a.Detail))
		}
	}
	for _, rule := range order {
		g := groups[rule]
		sev := Info
		if g.adv.Warning {
			sev = Warning
		}
		c.add(Finding{Rule: rule, Severity: sev, Message: g.adv.Message, Evidence: listed(g.lines, 8), Runs: g.ids, Fix: g.adv.Fix})
	}
}
