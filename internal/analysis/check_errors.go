package analysis

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/dblat/dblat/internal/words"
)

// RuleErrorRate: errors (conflicts, lost connections, others) per completed transaction
// above a threshold: the result reflects the test logic (seed 002: update conflicts).
const RuleErrorRate = "error-rate"

var errorRateRule = rule{names: []string{RuleErrorRate}, check: (*checker).errorRates}

// RuleRetryRate: transactions retried after a retryable error (serialization failure,
// deadlock, update conflict) above a threshold of those completed: not failures, but a
// share of the response time and of the server's work that the conflicts cost.
const RuleRetryRate = "retry-rate"

var retryRateRule = rule{names: []string{RuleRetryRate}, check: (*checker).retryRates}

// errorRates flags runs whose errors per completed transaction exceed the thresholds. In a
// study whose factors vary the tries (max_tries), the conflicts of its runs without retries
// are what the factor measures (examples/seed002-vendor-test.yaml): their retryable errors
// are a note, not a reason to withhold the figures; any other error still counts.
func (c *checker) errorRates() {
	byDesign := slices.Contains(c.g.Factors, "max_tries")
	for _, sev := range []Severity{Error, Warning, Info} {
		var ids []int64
		var lines []string
		for _, r := range c.fin {
			n, retryable := int64(0), int64(0)
			for k, v := range r.Summary.Errors {
				n += v
				if k == "retryable" {
					retryable += v
				}
			}
			if n == 0 {
				continue
			}
			done := r.Summary.Committed + r.Summary.Rollbacks
			rate := math.Inf(1)
			if done > 0 {
				rate = float64(n) / float64(done)
			}
			s := Info
			switch {
			case rate < c.opt.ErrorRateWarning:
				continue
			case byDesign && retryable == n:
			case rate >= c.opt.ErrorRateError:
				s = Error
			default:
				s = Warning
			}
			if s != sev {
				continue
			}
			var cls []string
			for _, k := range slices.Sorted(maps.Keys(r.Summary.Errors)) {
				if r.Summary.Errors[k] > 0 {
					cls = append(cls, fmt.Sprintf("%s %d", k, r.Summary.Errors[k]))
				}
			}
			ids = append(ids, r.ID)
			lines = append(lines, fmt.Sprintf("run %d: %s errors per completed transaction (%s; %d completed)", r.ID, pct(rate), strings.Join(cls, ", "), done))
		}
		if len(ids) == 0 {
			continue
		}
		f := Finding{Rule: RuleErrorRate, Severity: sev, Evidence: listed(lines, 8), Runs: ids,
			Fix: "find the cause in the error classes (retryable = conflicts and deadlocks, connection = lost connections): spread the load over more warehouses, fix the isolation or the transaction logic, or raise the server's limits"}
		switch sev {
		case Info:
			f.Message = "the study's max_tries factor varies retries on purpose: the conflicts its runs without them fail on are what it measures, and their throughput counts only the transactions that committed"
			f.Fix = "compare the levels of max_tries side by side; quote a level's throughput with its errors"
		default:
			limit := c.opt.ErrorRateWarning
			if sev == Error {
				limit = c.opt.ErrorRateError
			}
			f.Message = fmt.Sprintf("errors reach %s of completed transactions: the figures reflect conflicts or failures of the test logic as much as the engine (seed 002: update conflicts; TPC-C's own rollbacks are 1 %%)", pct(limit))
		}
		c.add(f)
	}
}

// retryRates flags runs whose transactions were retried often, apart from errors: a retried
// transaction committed in the end.
func (c *checker) retryRates() {
	for _, sev := range []Severity{Warning, Info} {
		var ids []int64
		var lines []string
		for _, r := range c.fin {
			if r.Summary.Retried == 0 {
				continue
			}
			done := r.Summary.Committed + r.Summary.Rollbacks
			for _, n := range r.Summary.Errors {
				done += n
			}
			rate := math.Inf(1)
			if done > 0 {
				rate = float64(r.Summary.Retried) / float64(done)
			}
			s := Severity(-1)
			switch {
			case rate >= c.opt.RetryRateWarning:
				s = Warning
			case rate >= c.opt.RetryRateInfo:
				s = Info
			}
			if s != sev {
				continue
			}
			var types []string
			for _, t := range r.Tx {
				if t.Retried > 0 {
					types = append(types, fmt.Sprintf("%s %d", t.Type, t.Retried))
				}
			}
			ids = append(ids, r.ID)
			lines = append(lines, fmt.Sprintf("run %d: %s of %s retried, %s in all (max tries %d; %s)",
				r.ID, pct(rate), words.Count(int(done), "transaction"), words.Count(int(r.Summary.Retries), "retry"), r.Params.Tries(), strings.Join(types, ", ")))
		}
		if len(ids) == 0 {
			continue
		}
		limit := c.opt.RetryRateInfo
		if sev == Warning {
			limit = c.opt.RetryRateWarning
		}
		c.add(Finding{Rule: RuleRetryRate, Severity: sev,
			Message:  fmt.Sprintf("%s of transactions or more were retried after a serialization failure, deadlock or update conflict: they committed, so they are not errors, but each retry is response time and server work that the conflicts cost (seed 002: test logic that provokes update conflicts)", pct(limit)),
			Evidence: listed(lines, 8), Runs: ids,
			Fix: "read the retry rate next to the throughput; to lower it, spread the load over more warehouses or rows, shorten the transactions, or compare with max_tries 1 to see what the conflicts cost"})
	}
}
