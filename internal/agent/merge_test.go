package agent

import (
	"math"
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

// TestMerge: three parts of unequal size; the merge's counts are the parts' sums, each of
// its histograms (service, wait, response, lag) equals the histogram of every part's values
// together, its wire figures are the means weighted by committed transactions, its open-loop
// counters and retries add up, and its samples sum by wall-clock second although the parts
// started a few milliseconds apart.
func TestMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"service", "wait", "resp", "lag"}
	all := map[string]map[string]*hdrhistogram.Histogram{}
	for _, k := range kinds {
		all[k] = map[string]*hdrhistogram.Histogram{"new_order": newHist(), "payment": newHist()}
	}
	wire := map[string][4]float64{} // per type: Σ n·round trips, Σ n·bytes up, Σ n·bytes down, Σ n
	var retries, retried, late, offered, skipped, backlog int64
	start := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	var parts []results.Part
	var committed, rollbacks int64
	for i, n := range []int{500, 2000, 7} {
		r := &results.Run{Summary: results.Summary{Metric: results.MetricNOPM, Elapsed: time.Duration(10+i) * time.Second,
			Errors: map[string]int64{"retryable": int64(i)}, Retries: int64(3 * i), Retried: int64(2 * i), Late: int64(i + 1),
			Offered: int64(n + 10), Skipped: int64(i), Backlog: int64(2 * i)},
			Client:     results.Client{CPUSeconds: 1.5},
			StatsAfter: map[string]float64{"xact_commit": float64(1000 * (i + 1))}}
		retries, retried, late = retries+r.Summary.Retries, retried+r.Summary.Retried, late+r.Summary.Late
		offered, skipped, backlog = offered+r.Summary.Offered, skipped+r.Summary.Skipped, backlog+r.Summary.Backlog
		for _, typ := range []string{"new_order", "payment"} {
			enc := map[string]string{}
			for ki, k := range kinds {
				h := newHist()
				for range n {
					v := int64(rng.ExpFloat64()*float64(3000*(ki+1))) + 1
					_ = h.RecordValue(v)
					_ = all[k][typ].RecordValue(v)
				}
				enc[k] = encode(t, h)
			}
			tx := results.TxSummary{Type: typ, Committed: int64(n), Rollbacks: int64(i), Hist: enc["service"],
				WaitHist: enc["wait"], RespHist: enc["resp"], LagHist: enc["lag"], Retries: int64(3 * i), Retried: int64(2 * i),
				RoundTrips: float64(10 + i), RoundTripsP99: int64(12 + i), BytesUp: float64(100 * (i + 1)), BytesDown: float64(1000 + i)}
			w := wire[typ]
			wire[typ] = [4]float64{w[0] + float64(n)*tx.RoundTrips, w[1] + float64(n)*tx.BytesUp, w[2] + float64(n)*tx.BytesDown, w[3] + float64(n)}
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
	if s := run.Summary; s.Retries != retries || s.Retried != retried || s.Late != late || s.Offered != offered ||
		s.Skipped != skipped || s.Backlog != backlog {
		t.Errorf("summary %+v: want retries %d retried %d late %d offered %d skipped %d backlog %d", s, retries, retried, late, offered, skipped, backlog)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, tx := range run.Tx {
		for k, enc := range map[string]string{"service": tx.Hist, "wait": tx.WaitHist, "resp": tx.RespHist, "lag": tx.LagHist} {
			h, err := results.DecodeHist(enc)
			if err != nil {
				t.Fatal(err)
			}
			if want := all[k][tx.Type]; !h.Equals(want) {
				t.Errorf("%s %s: merged histogram (%d values) differs from the histogram of all values (%d)", tx.Type, k, h.TotalCount(), want.TotalCount())
			}
		}
		svc, resp, lag, wait := all["service"][tx.Type], all["resp"][tx.Type], all["lag"][tx.Type], all["wait"][tx.Type]
		if tx.P99Us != svc.ValueAtQuantile(99) || tx.MaxUs != svc.Max() || tx.Committed != 2507 {
			t.Errorf("%s: p99 %d max %d committed %d, want %d %d 2507", tx.Type, tx.P99Us, tx.MaxUs, tx.Committed, svc.ValueAtQuantile(99), svc.Max())
		}
		if tx.RespP99Us != resp.ValueAtQuantile(99) || tx.RespMaxUs != resp.Max() || !near(tx.RespMeanUs, resp.Mean()) ||
			tx.LagP99Us != lag.ValueAtQuantile(99) || tx.LagMaxUs != lag.Max() || !near(tx.LagMeanUs, lag.Mean()) ||
			tx.WaitP99Us != wait.ValueAtQuantile(99) || !near(tx.WaitMeanUs, wait.Mean()) {
			t.Errorf("%s: response %v/%d/%d lag %v/%d/%d wait %v/%d, want the all-values histograms' figures", tx.Type,
				tx.RespMeanUs, tx.RespP99Us, tx.RespMaxUs, tx.LagMeanUs, tx.LagP99Us, tx.LagMaxUs, tx.WaitMeanUs, tx.WaitP99Us)
		}
		if tx.Retries != retries || tx.Retried != retried {
			t.Errorf("%s: retries %d retried %d, want %d %d", tx.Type, tx.Retries, tx.Retried, retries, retried)
		}
		w := wire[tx.Type]
		if !near(tx.RoundTrips, w[0]/w[3]) || !near(tx.BytesUp, w[1]/w[3]) || !near(tx.BytesDown, w[2]/w[3]) {
			t.Errorf("%s: round trips %v bytes %v/%v, want the committed-weighted means %v %v/%v", tx.Type,
				tx.RoundTrips, tx.BytesUp, tx.BytesDown, w[0]/w[3], w[1]/w[3], w[2]/w[3])
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
