package analysis

import (
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
)

// TestResponseLimits: p90s come from the pooled histograms, not the mean of the runs'
// p90s. At 100 ms one repeat's New-Orders take 1 s and the other's 10 s: each run's own p90
// averages to 5.5 s, but the pooled p90 is 10 s, over the 5 s limit. Stock-Level at 15 s
// passes its 20 s limit.
func TestResponseLimits(t *testing.T) {
	mk := func(id int64, rtt time.Duration, noUs, slUs int64) results.Run {
		r := cleanRun(id, rtt, 8, 100)
		r.Tx = []results.TxSummary{
			{Type: "new_order", Committed: 100, P90Us: noUs, Hist: hist(t, repeat(noUs, 100)...),
				WaitHist: hist(t, repeat(7, 100)...), WaitP99Us: 7},
			{Type: "stock_level", Committed: 10, P90Us: slUs, Hist: hist(t, repeat(slUs, 10)...)},
			{Type: "delivery"}, // none completed: no row
		}
		return r
	}
	runs := []results.Run{
		mk(1, 0, 20_000, 50_000), mk(2, 0, 30_000, 60_000),
		mk(3, 100*ms, 1_000_000, 15_000_000), mk(4, 100*ms, 10_000_000, 15_000_000),
	}
	got := ResponseLimits(runs, factorsRT)
	if len(got) != 4 {
		t.Fatalf("%d rows: %+v", len(got), got)
	}
	type row struct {
		cell, typ string
		p90       time.Duration
		ok        bool
	}
	want := []row{
		{"rtt=0 terminals=8", "new_order", 30 * ms, true},
		{"rtt=0 terminals=8", "stock_level", 60 * ms, true},
		{"rtt=100ms terminals=8", "new_order", 10 * time.Second, false},
		{"rtt=100ms terminals=8", "stock_level", 15 * time.Second, true},
	}
	for i, w := range want {
		g := got[i]
		// HDR histograms keep 3 significant digits: values are equivalent within 0.1 %.
		d := g.P90 - w.p90
		if g.Cell != w.cell || g.TxType != w.typ || g.OK != w.ok || !g.Pooled || d < 0 || d > w.p90/1000 || g.Runs != 2 {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	if got[2].Limit != 5*time.Second || got[3].Limit != 20*time.Second || got[0].WaitP99 != 7*us || got[0].Count != 200 {
		t.Errorf("limits %v %v, wait %v, count %d", got[2].Limit, got[3].Limit, got[0].WaitP99, got[0].Count)
	}

	// Without histograms: the mean of the runs' p90s, marked not pooled.
	for i := range runs {
		runs[i].Tx[0].Hist = ""
	}
	got = ResponseLimits(runs, factorsRT)
	if got[2].Pooled || got[2].P90 != 5500*ms || got[2].OK {
		t.Errorf("unpooled: %+v", got[2])
	}

	// Not TPC-C: nothing.
	for i := range runs {
		runs[i].Params.Workload = "tpcb"
	}
	if got := ResponseLimits(runs, factorsRT); got != nil {
		t.Errorf("tpcb: %+v", got)
	}
}
