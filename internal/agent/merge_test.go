package agent

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/results"
)

// newHist has the runner's geometry: 1 µs to 10 minutes, 3 significant digits.
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 10*60*1_000_000, 3) }

func encode(t *testing.T, h *hdrhistogram.Histogram) string {
	t.Helper()
	s, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMerge: three parts of unequal size; the merge's counts are the parts' sums, its
// histograms equal the histogram of every part's values together, and its samples sum by
// wall-clock second although the parts started a few milliseconds apart.
func TestMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := map[string]*hdrhistogram.Histogram{"new_order": newHist(), "payment": newHist()}
	start := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	var parts []results.Part
	var committed, rollbacks int64
	for i, n := range []int{500, 2000, 7} {
		r := &results.Run{Summary: results.Summary{Metric: results.MetricNOPM, Elapsed: time.Duration(10+i) * time.Second,
			Errors: map[string]int64{"retryable": int64(i)}},
			Client:     results.Client{CPUSeconds: 1.5},
			StatsAfter: map[string]float64{"xact_commit": float64(1000 * (i + 1))}}
		for _, typ := range []string{"new_order", "payment"} {
			h := newHist()
			for range n {
				v := int64(rng.ExpFloat64()*3000) + 1
				_ = h.RecordValue(v)
				_ = all[typ].RecordValue(v)
			}
			tx := results.TxSummary{Type: typ, Committed: int64(n), Rollbacks: int64(i), Hist: encode(t, h),
				RoundTrips: float64(10 + i), RoundTripsP99: int64(12 + i)}
			r.Tx = append(r.Tx, tx)
			r.Summary.Committed += tx.Committed
			r.Summary.Rollbacks += tx.Rollbacks
			if typ == "new_order" {
				r.Summary.NOPM = float64(n) / r.Summary.Elapsed.Minutes()
			}
		}
		committed += r.Summary.Committed
		rollbacks += r.Summary.Rollbacks
		for s := range 3 {
			r.Samples = append(r.Samples, results.Sample{Offset: time.Duration(s+1)*time.Second + 2*time.Millisecond, Committed: int64(n), P99Us: int64(100 * (i + 1))})
		}
		parts = append(parts, results.Part{Index: i, Agent: string(rune('a' + i)), State: results.PartDone, Result: r,
			StartAt: start, Started: start.Add(time.Duration(i) * 3 * time.Millisecond)})
	}
	var run results.Run
	if err := Merge(&run, parts); err != nil {
		t.Fatal(err)
	}
	if run.Summary.Committed != committed || run.Summary.Rollbacks != rollbacks {
		t.Errorf("committed %d rollbacks %d, want %d %d", run.Summary.Committed, run.Summary.Rollbacks, committed, rollbacks)
	}
	if run.Summary.Elapsed != 12*time.Second || run.Summary.Errors["retryable"] != 3 {
		t.Errorf("elapsed %v errors %v: want the longest window and summed errors", run.Summary.Elapsed, run.Summary.Errors)
	}
	if want := float64(500+2000+7) / (12 * time.Second).Minutes(); run.Summary.NOPM < want*0.999999 || run.Summary.NOPM > want*1.000001 {
		t.Errorf("NOPM %v, want %v (every part's New-Orders over the longest window)", run.Summary.NOPM, want)
	}
	if run.Agents != 3 || run.StartSkew != 6*time.Millisecond || run.Client.CPUSeconds != 4.5 || run.StatsAfter["xact_commit"] != 3000 {
		t.Errorf("agents %d skew %v cpu %v stats %v", run.Agents, run.StartSkew, run.Client.CPUSeconds, run.StatsAfter)
	}
	for _, tx := range run.Tx {
		h, err := results.DecodeHist(tx.Hist)
		if err != nil {
			t.Fatal(err)
		}
		want := all[tx.Type]
		if !h.Equals(want) {
			t.Errorf("%s: merged histogram (%d values) differs from the histogram of all values (%d)", tx.Type, h.TotalCount(), want.TotalCount())
		}
		if tx.P99Us != want.ValueAtQuantile(99) || tx.MaxUs != want.Max() || tx.Committed != 2507 {
			t.Errorf("%s: p99 %d max %d committed %d, want %d %d 2507", tx.Type, tx.P99Us, tx.MaxUs, tx.Committed, want.ValueAtQuantile(99), want.Max())
		}
		if tx.RoundTripsP99 != 14 {
			t.Errorf("%s: round trips p99 %d, want the largest part's, 14", tx.Type, tx.RoundTripsP99)
		}
	}
	if len(run.Samples) != 3 {
		t.Fatalf("%d merged samples, want 3 (one per second): %+v", len(run.Samples), run.Samples)
	}
	for i, s := range run.Samples {
		if s.Offset != time.Duration(i+1)*time.Second || s.Committed != 2507 || s.P99Us != 300 {
			t.Errorf("sample %d: %+v, want offset %ds, 2507 committed, p99 the largest", i, s, i+1)
		}
	}
	parts[1].State = results.PartFailed
	if err := Merge(&run, parts); err == nil {
		t.Error("a failed part merged")
	}
}
