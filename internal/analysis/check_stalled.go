package analysis

import (
	"fmt"

	"github.com/dblat/dblat/internal/results"
)

// RuleStalled: runs whose window completed no transaction at all. The execution core stores
// them as failed (every terminal stalled: a lock wait that never ended, a window shorter
// than one think-time cycle); a study whose cells lost runs that way compares what is left.
const RuleStalled = "stalled"

var stalledRule = rule{names: []string{RuleStalled}, check: (*checker).stalled}

// stalled flags failed runs that measured a window and completed nothing in it: a
// transaction that committed or rolled back by design would have counted.
func (c *checker) stalled() {
	var ids []int64
	var cells, lines []string
	for _, cl := range c.g.Cells {
		for _, r := range cl.Runs {
			if r.Status != results.StatusFailed || r.Summary.Elapsed <= 0 || r.Summary.Committed+r.Summary.Rollbacks > 0 {
				continue
			}
			ids = append(ids, r.ID)
			if len(cells) == 0 || cells[len(cells)-1] != cl.Key {
				cells = append(cells, cl.Key)
			}
			lines = append(lines, fmt.Sprintf("run %d (%s): %s", r.ID, orAll(cl.Key), r.Reason))
		}
	}
	if len(ids) == 0 {
		return
	}
	c.add(Finding{Rule: RuleStalled, Severity: Error,
		Message:  "runs completed no transaction in their window: every terminal stalled, so these cells measured nothing, and their other repeats may have met the same stalls in part",
		Evidence: listed(lines, 8), Runs: ids, Cells: cells,
		Fix: "find what the terminals waited for (a lock wait the server does not resolve, a deadlock it detects late, a window shorter than the think times' cycle) and rerun those cells"})
}
