package runner

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/results"
)

// summarize turns the window's statistics into the run's figures; nopmType is the type whose
// commits per minute are Summary.NOPM ("" leaves it 0).
func summarize(win []typeStats, types []string, nopmType string, elapsed time.Duration) *Result {
	res := &Result{Summary: results.Summary{Elapsed: elapsed, Errors: map[string]int64{}}}
	minutes := elapsed.Minutes()
	for t, ts := range win {
		tx := results.TxSummary{
			Type:      types[t],
			Committed: ts.committed,
			Rollbacks: ts.rollbacks,
			Errors:    map[string]int64{},
		}
		for c, n := range ts.errors {
			if n > 0 && engine.ErrorClass(c) != engine.ClassCanceled {
				name := engine.ErrorClass(c).String()
				tx.Errors[name] += n
				res.Summary.Errors[name] += n
			}
		}
		if ts.hist.TotalCount() > 0 {
			tx.MeanUs = ts.hist.Mean()
			tx.P50Us = ts.hist.ValueAtQuantile(50)
			tx.P90Us = ts.hist.ValueAtQuantile(90)
			tx.P95Us = ts.hist.ValueAtQuantile(95)
			tx.P99Us = ts.hist.ValueAtQuantile(99)
			tx.P999Us = ts.hist.ValueAtQuantile(99.9)
			tx.MaxUs = ts.hist.Max()
			tx.WaitMeanUs = ts.wait.Mean()
			tx.WaitP99Us = ts.wait.ValueAtQuantile(99)
			tx.Hist = encode(ts.hist)
			tx.WaitHist = encode(ts.wait)
			tx.RespMeanUs = ts.resp.Mean()
			tx.RespP50Us = ts.resp.ValueAtQuantile(50)
			tx.RespP90Us = ts.resp.ValueAtQuantile(90)
			tx.RespP99Us = ts.resp.ValueAtQuantile(99)
			tx.RespMaxUs = ts.resp.Max()
			tx.LagMeanUs = ts.lag.Mean()
			tx.LagP99Us = ts.lag.ValueAtQuantile(99)
			tx.LagMaxUs = ts.lag.Max()
			tx.RespHist = encode(ts.resp)
			tx.LagHist = encode(ts.lag)
		}
		tx.Retries, tx.Retried = ts.retries, ts.retried
		res.Summary.Retries += ts.retries
		res.Summary.Retried += ts.retried
		res.Summary.Late += ts.late
		if n := float64(ts.rt.n); n > 0 {
			tx.RoundTrips = float64(ts.rt.trips) / n
			tx.RoundTripsP50 = ts.rt.tripsHist.ValueAtQuantile(50)
			tx.RoundTripsP99 = ts.rt.tripsHist.ValueAtQuantile(99)
			tx.BytesUp = float64(ts.rt.bytesUp) / n
			tx.BytesDown = float64(ts.rt.bytesDown) / n
			tx.WritesUp = float64(ts.rt.writesUp) / n
		}
		res.Summary.Committed += ts.committed
		res.Summary.Rollbacks += ts.rollbacks
		if nopmType != "" && types[t] == nopmType && minutes > 0 {
			res.Summary.NOPM = float64(ts.committed) / minutes
		}
		res.Tx = append(res.Tx, tx)
	}
	if elapsed > 0 {
		// TPM counts every completed business transaction, including New-Order's designed
		// rollbacks, which the spec counts as completed (clause 2.4.2.3).
		done := float64(res.Summary.Committed + res.Summary.Rollbacks)
		res.Summary.TPS = done / elapsed.Seconds()
		res.Summary.TPM = done / minutes
	}
	return res
}

func encode(h *hdrhistogram.Histogram) string {
	s, err := results.EncodeHist(h)
	if err != nil {
		return ""
	}
	return s
}

// samples turns one interval into stored samples: one per type that did anything, and one
// for all types together (Type "").
func samples(iv interval, types []string, offset time.Duration) []results.Sample {
	var out []results.Sample
	all, allResp := newHist(), newHist()
	var allCommits, allErrors int64
	for t, h := range iv.hist {
		all.Merge(h)
		allResp.Merge(iv.resp[t])
		allCommits += iv.commits[t]
		allErrors += iv.errors[t]
		if iv.commits[t] == 0 && iv.errors[t] == 0 {
			continue
		}
		out = append(out, sample(types[t], offset, iv.commits[t], iv.errors[t], h, iv.resp[t]))
	}
	total := sample("", offset, allCommits, allErrors, all, allResp)
	total.StallUs = iv.stall.Microseconds()
	return append(out, total)
}

func sample(typ string, offset time.Duration, commits, errs int64, h, resp *hdrhistogram.Histogram) results.Sample {
	s := results.Sample{Offset: offset, Type: typ, Committed: commits, Errors: errs}
	if h.TotalCount() > 0 {
		s.P50Us = h.ValueAtQuantile(50)
		s.P99Us = h.ValueAtQuantile(99)
		s.MaxUs = h.Max()
		s.RespP99Us = resp.ValueAtQuantile(99)
	}
	return s
}
