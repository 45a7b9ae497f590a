package analysis

import (
	"fmt"

	"github.com/dblat/dblat/internal/words"
)

// RuleClientBound: dblat's own CPU near saturation: the figure measures the tool.
const RuleClientBound = "client-bound"

var clientBoundRule = rule{names: []string{RuleClientBound}, check: (*checker).clientBound}

// clientBound flags runs where dblat's own CPU use approached the client's cores.
func (c *checker) clientBound() {
	for _, sev := range []Severity{Error, Warning} {
		var ids []int64
		var lines []string
		shared := false
		for _, r := range c.fin {
			u, ok := clientUse(r)
			if !ok {
				continue
			}
			el := r.Summary.Elapsed.Seconds()
			s := Info
			switch {
			case u >= c.opt.ClientCPUError:
				s = Error
			case u >= c.opt.ClientCPUWarning:
				s = Warning
			}
			if s != sev {
				continue
			}
			ids = append(ids, r.ID)
			shared = shared || r.Server.Managed
			on := words.Count(r.Client.Cores, "core")
			if n := clientCores(r); n < r.Client.Cores {
				on = fmt.Sprintf("%d of %s (GOMAXPROCS %d)", n, on, n)
			}
			lines = append(lines, fmt.Sprintf("run %d: %.1f CPU-s in %.1f s on %s = %s", r.ID, r.Client.CPUSeconds, el, on, pct(u)))
		}
		if len(ids) == 0 {
			continue
		}
		limit := c.opt.ClientCPUWarning
		if sev == Error {
			limit = c.opt.ClientCPUError
		}
		msg := fmt.Sprintf("dblat itself used %s or more of the client's cores during the window: its own queueing is counted as database time, so the figure measures the tool as much as the database", pct(limit))
		if shared {
			msg += "; the server runs on the same machine (managed) and competes for the same cores, so the contention is worse than this share shows"
		}
		c.add(Finding{Rule: RuleClientBound, Severity: sev, Message: msg, Evidence: listed(lines, 8), Runs: ids,
			Fix: "run fewer terminals per client, give dblat its own machine or cores, or use a faster client; the latency link's own relaying costs CPU too (see BenchmarkLinkCPU)"})
	}
}
