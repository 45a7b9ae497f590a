package analysis

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/results"
)

// ResponseTimeLimits are TPC-C's 90th-percentile response-time limits per transaction type
// (clause 5.2.5.3, table 5.2.5.7; tpcc.md §5.2): at least 90 % of each type within 5 s,
// Stock-Level within 20 s. Delivery's limit is for its interactive part; dblat runs the
// deferred part inside the measured transaction, so its figure is conservative.
var ResponseTimeLimits = map[string]time.Duration{
	"new_order":    5 * time.Second,
	"payment":      5 * time.Second,
	"order_status": 5 * time.Second,
	"delivery":     5 * time.Second,
	"stock_level":  20 * time.Second,
}

// ResponseLimit is one transaction type's 90th percentile in one cell against its limit.
type ResponseLimit struct {
	// Cell is the cell's key ("rtt=1ms terminals=8"), as in the report.
	Cell string `json:"cell"`
	// RTT is the cell's requested RTT.
	RTT    time.Duration `json:"rtt"`
	TxType string        `json:"tx_type"`
	// Runs is the number of finished runs that completed transactions of the type; Count
	// the transactions (committed and rolled back) they completed.
	Runs  int   `json:"runs"`
	Count int64 `json:"count"`
	// P90 is the 90th percentile of the pooled distribution (the runs' HDR histograms
	// merged) when Pooled, else the mean of the runs' own p90s. When Response is set it is
	// the response time from each transaction's intended start, what the user waited (the
	// cell's runs are open-loop or have think times, and stored it); otherwise the service
	// time, without a wait for a pooled connection (connections < terminals), whose size
	// WaitP99 shows.
	P90      time.Duration `json:"p90"`
	Pooled   bool          `json:"pooled"`
	Response bool          `json:"response,omitempty"`
	WaitP99  time.Duration `json:"wait_p99,omitempty"`
	Limit    time.Duration `json:"limit"`
	OK       bool          `json:"ok"`
}

// ResponseLimits checks TPC-C's response-time limits (ResponseTimeLimits) in every cell
// whose finished runs are all TPC-C, for every type with a limit that completed at least
// one transaction. It returns nil when there is no such cell. Ordered by cell, then
// transaction type in ResponseTimeLimits' spec order (New-Order, Payment, Order-Status,
// Delivery, Stock-Level).
func ResponseLimits(runs []results.Run, factors []string) []ResponseLimit {
	g := group(runs, factors)
	var out []ResponseLimit
	for _, c := range g.Cells {
		if len(c.Finished) == 0 {
			continue
		}
		tpcc := true
		for _, r := range c.Finished {
			if r.Params.Workload != "tpcc" {
				tpcc = false
			}
		}
		if !tpcc {
			continue
		}
		for _, typ := range limitOrder {
			var txs []*results.TxSummary
			for _, r := range c.Finished {
				for i := range r.Tx {
					if t := &r.Tx[i]; t.Type == typ && t.Committed+t.Rollbacks > 0 {
						txs = append(txs, &r.Tx[i])
					}
				}
			}
			rl := ResponseLimit{Cell: c.Key, RTT: c.Finished[0].Params.RTT, TxType: typ, Runs: len(txs), Limit: ResponseTimeLimits[typ]}
			for _, t := range txs {
				rl.Count += t.Committed + t.Rollbacks
			}
			if rl.Count == 0 {
				continue
			}
			paced := true
			for _, r := range c.Finished {
				paced = paced && (r.Params.OpenLoop() || r.Params.Think)
			}
			for _, t := range txs {
				paced = paced && t.RespHist != ""
			}
			p90, pooled := pooledP90(txs, paced)
			rl.P90, rl.Pooled, rl.Response = time.Duration(p90)*time.Microsecond, pooled, paced
			var w int64
			for _, t := range txs {
				w = max(w, t.WaitP99Us)
			}
			if h, ok := merge(txs, func(t *results.TxSummary) string { return t.WaitHist }); ok {
				w = h.ValueAtQuantile(99)
			}
			rl.WaitP99 = time.Duration(w) * time.Microsecond
			rl.OK = rl.P90 <= rl.Limit
			out = append(out, rl)
		}
	}
	return out
}

// limitOrder is the spec's order of the transaction types (clause 2).
var limitOrder = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// pooledP90 returns the 90th percentile in microseconds of the merged histograms of the
// service time, or of the response time when response is set, or, when a run lacks one or
// one does not decode, the mean of the runs' own p90s (false).
func pooledP90(txs []*results.TxSummary, response bool) (int64, bool) {
	get, p90 := func(t *results.TxSummary) string { return t.Hist }, func(t *results.TxSummary) int64 { return t.P90Us }
	if response {
		get, p90 = func(t *results.TxSummary) string { return t.RespHist }, func(t *results.TxSummary) int64 { return t.RespP90Us }
	}
	if h, ok := merge(txs, get); ok {
		return h.ValueAtQuantile(90), true
	}
	var sum float64
	for _, t := range txs {
		sum += float64(p90(t))
	}
	return int64(math.Round(sum / float64(len(txs)))), false
}

// merge decodes and merges the histogram get selects from each summary; false when any is
// missing, does not decode, or holds values outside the merged range.
func merge(txs []*results.TxSummary, get func(*results.TxSummary) string) (*hdrhistogram.Histogram, bool) {
	var h *hdrhistogram.Histogram
	for _, t := range txs {
		s := get(t)
		if s == "" {
			return nil, false
		}
		d, err := results.DecodeHist(s)
		if err != nil {
			return nil, false
		}
		if h == nil {
			h = d
			continue
		}
		if h.Merge(d) > 0 {
			return nil, false
		}
	}
	return h, h != nil
}
