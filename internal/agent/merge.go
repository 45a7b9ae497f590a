package agent

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/results"
)

// maxExamples is how many distinct error messages per class the merged run keeps, as the
// runner keeps per run.
const maxExamples = 3

// Merge fills run's figures with the exact merge of its parts' (parts[i].Result, each
// done): Summary, Tx, Samples, Link, server statistics, Client.CPUSeconds and StartSkew.
// Counts add up; each transaction type's histograms (service, wait, response, lag) are
// merged bucket by bucket and its percentiles read from the merge, as the runner reads
// them from one process's; throughput is the summed work over the longest part's window.
// Per-second samples are summed by wall-clock second: a part's sample at offset o counts
// in the second nearest to (its actual start − the announced start) + o. Figures no part
// keeps a histogram of are bounded instead: a merged sample's percentiles and a type's
// round-trip percentiles are the largest of the parts' (upper bounds), the link's
// achieved RTT and lateness percentiles the worst part's. Server statistics take, per
// counter, the smallest value before and the largest after the run. run's Params, Server
// identity and Client identity are left to the caller.
func Merge(run *results.Run, parts []results.Part) error {
	if len(parts) == 0 {
		return errors.New("merge: no parts")
	}
	var rs []*results.Run
	for _, p := range parts {
		if p.State != results.PartDone || p.Result == nil {
			return fmt.Errorf("merge: part %d (agent %s) is %s, not done", p.Index, p.Agent, p.State)
		}
		rs = append(rs, p.Result)
	}
	sum, err := mergeSummary(rs)
	if err != nil {
		return err
	}
	tx, err := mergeTx(rs, sum.Elapsed)
	if err != nil {
		return err
	}
	run.Summary, run.Tx = sum, tx
	run.Samples = mergeSamples(parts)
	run.Link = mergeLink(rs)
	run.StatsBefore, run.StatsAfter = mergeStats(rs, false), mergeStats(rs, true)
	run.Client.CPUSeconds, run.Client.CPULatencyHold = 0, true
	for _, r := range rs {
		run.Client.CPUSeconds += r.Client.CPUSeconds
		run.Client.CPULatencyHold = run.Client.CPULatencyHold && r.Client.CPULatencyHold
		run.Server.DatabaseBytes = max(run.Server.DatabaseBytes, r.Server.DatabaseBytes)
	}
	run.Agents, run.StartSkew = len(parts), StartSkew(parts)
	return nil
}

// StartSkew is the spread of the parts' actual starts: the latest minus the earliest (0
// when a start is unknown).
func StartSkew(parts []results.Part) time.Duration {
	var lo, hi time.Time
	for _, p := range parts {
		if p.Started.IsZero() {
			return 0
		}
		if lo.IsZero() || p.Started.Before(lo) {
			lo = p.Started
		}
		if p.Started.After(hi) {
			hi = p.Started
		}
	}
	return hi.Sub(lo)
}

func mergeSummary(rs []*results.Run) (results.Summary, error) {
	s := results.Summary{Metric: rs[0].Summary.Metric, Errors: map[string]int64{}}
	var nopmWork float64 // New-Order commits: each part's NOPM times its minutes
	for _, r := range rs {
		p := r.Summary
		if p.Metric != s.Metric {
			return s, fmt.Errorf("merge: parts report %s and %s", s.Metric, p.Metric)
		}
		s.Elapsed = max(s.Elapsed, p.Elapsed)
		s.Warmup = max(s.Warmup, p.Warmup)
		s.Committed += p.Committed
		s.Rollbacks += p.Rollbacks
		for k, v := range p.Errors {
			s.Errors[k] += v
		}
		for k, msgs := range p.ErrorExamples {
			if s.ErrorExamples == nil {
				s.ErrorExamples = map[string][]string{}
			}
			for _, m := range msgs {
				if len(s.ErrorExamples[k]) < maxExamples && !slices.Contains(s.ErrorExamples[k], m) {
					s.ErrorExamples[k] = append(s.ErrorExamples[k], m)
				}
			}
		}
		nopmWork += p.NOPM * p.Elapsed.Minutes()
		s.Retries += p.Retries
		s.Retried += p.Retried
		s.Late += p.Late
		s.Offered += p.Offered
		s.Skipped += p.Skipped
		s.Backlog += p.Backlog
		s.AchievedRate += p.AchievedRate
		s.Overload = s.Overload || p.Overload
	}
	if s.Offered > 0 {
		s.Overload = s.Overload || results.IsOverload(s.Offered, s.Skipped, s.Backlog)
	}
	if s.Elapsed > 0 {
		done := float64(s.Committed + s.Rollbacks)
		s.TPS = done / s.Elapsed.Seconds()
		s.TPM = done / s.Elapsed.Minutes()
		s.NOPM = math.Round(nopmWork) / s.Elapsed.Minutes()
	}
	return s, nil
}

// histSum merges encoded histograms; nil when none holds a value.
type histSum struct{ h *hdrhistogram.Histogram }

func (hs *histSum) add(enc string) error {
	if enc == "" {
		return nil
	}
	h, err := results.DecodeHist(enc)
	if err != nil {
		return err
	}
	if hs.h == nil {
		hs.h = h
		return nil
	}
	if dropped := hs.h.Merge(h); dropped > 0 {
		return fmt.Errorf("merge: %d values outside the histogram's range", dropped)
	}
	return nil
}

func (hs *histSum) encode() (string, error) {
	if hs.h == nil {
		return "", nil
	}
	return results.EncodeHist(hs.h)
}

func mergeTx(rs []*results.Run, elapsed time.Duration) ([]results.TxSummary, error) {
	var order []string
	byType := map[string][]results.TxSummary{}
	for _, r := range rs {
		for _, t := range r.Tx {
			if _, ok := byType[t.Type]; !ok {
				order = append(order, t.Type)
			}
			byType[t.Type] = append(byType[t.Type], t)
		}
	}
	out := make([]results.TxSummary, 0, len(order))
	for _, typ := range order {
		m := results.TxSummary{Type: typ, Errors: map[string]int64{}}
		var hist, wait, resp, lag histSum
		var wire float64 // transactions the wire means are over
		for _, t := range byType[typ] {
			m.Committed += t.Committed
			m.Rollbacks += t.Rollbacks
			m.Retries += t.Retries
			m.Retried += t.Retried
			for k, v := range t.Errors {
				m.Errors[k] += v
			}
			if err := errors.Join(hist.add(t.Hist), wait.add(t.WaitHist), resp.add(t.RespHist), lag.add(t.LagHist)); err != nil {
				return nil, fmt.Errorf("merge %s: %w", typ, err)
			}
			if t.RoundTrips > 0 {
				n := float64(t.Committed)
				wire += n
				m.RoundTrips += t.RoundTrips * n
				m.BytesUp += t.BytesUp * n
				m.BytesDown += t.BytesDown * n
				m.WritesUp += t.WritesUp * n
				m.RoundTripsP50 = max(m.RoundTripsP50, t.RoundTripsP50)
				m.RoundTripsP99 = max(m.RoundTripsP99, t.RoundTripsP99)
			}
		}
		if wire > 0 {
			m.RoundTrips, m.BytesUp, m.BytesDown, m.WritesUp = m.RoundTrips/wire, m.BytesUp/wire, m.BytesDown/wire, m.WritesUp/wire
		}
		if h := hist.h; h != nil && h.TotalCount() > 0 {
			m.MeanUs, m.P50Us, m.P90Us, m.P95Us = h.Mean(), h.ValueAtQuantile(50), h.ValueAtQuantile(90), h.ValueAtQuantile(95)
			m.P99Us, m.P999Us, m.MaxUs = h.ValueAtQuantile(99), h.ValueAtQuantile(99.9), h.Max()
		}
		if h := wait.h; h != nil && h.TotalCount() > 0 {
			m.WaitMeanUs, m.WaitP99Us = h.Mean(), h.ValueAtQuantile(99)
		}
		if h := resp.h; h != nil && h.TotalCount() > 0 {
			m.RespMeanUs, m.RespP50Us, m.RespP90Us = h.Mean(), h.ValueAtQuantile(50), h.ValueAtQuantile(90)
			m.RespP99Us, m.RespMaxUs = h.ValueAtQuantile(99), h.Max()
		}
		if h := lag.h; h != nil && h.TotalCount() > 0 {
			m.LagMeanUs, m.LagP99Us, m.LagMaxUs = h.Mean(), h.ValueAtQuantile(99), h.Max()
		}
		var errs []error
		for _, x := range []struct {
			dst *string
			hs  *histSum
		}{{&m.Hist, &hist}, {&m.WaitHist, &wait}, {&m.RespHist, &resp}, {&m.LagHist, &lag}} {
			var err error
			*x.dst, err = x.hs.encode()
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("merge %s: %w", typ, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// mergeSamples sums the parts' samples by wall-clock second (see Merge).
func mergeSamples(parts []results.Part) []results.Sample {
	type key struct {
		sec int64
		typ string
	}
	acc := map[key]*results.Sample{}
	for _, p := range parts {
		shift := time.Duration(0)
		if !p.Started.IsZero() && !p.StartAt.IsZero() {
			shift = p.Started.Sub(p.StartAt)
		}
		for _, s := range p.Result.Samples {
			sec := int64(math.Round((shift + s.Offset).Seconds()))
			k := key{sec, s.Type}
			m := acc[k]
			if m == nil {
				m = &results.Sample{Offset: time.Duration(sec) * time.Second, Type: s.Type}
				acc[k] = m
			}
			m.Committed += s.Committed
			m.Errors += s.Errors
			m.P50Us, m.P99Us = max(m.P50Us, s.P50Us), max(m.P99Us, s.P99Us)
			m.MaxUs, m.RespP99Us = max(m.MaxUs, s.MaxUs), max(m.RespP99Us, s.RespP99Us)
		}
	}
	out := make([]results.Sample, 0, len(acc))
	for _, s := range acc {
		out = append(out, *s)
	}
	// By second, the all-types sample ("") last in each second, as the runner orders them.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Offset != b.Offset {
			return a.Offset < b.Offset
		}
		if (a.Type == "") != (b.Type == "") {
			return b.Type == ""
		}
		return a.Type < b.Type
	})
	return out
}

func mergeLink(rs []*results.Run) *results.Link {
	var m *results.Link
	for _, r := range rs {
		l := r.Link
		if l == nil {
			continue
		}
		if m == nil {
			c := *l
			m = &c
			continue
		}
		m.AchievedP50, m.AchievedP99 = max(m.AchievedP50, l.AchievedP50), max(m.AchievedP99, l.AchievedP99)
		m.Samples += l.Samples
		m.RoundTrips += l.RoundTrips
		m.BytesUp += l.BytesUp
		m.BytesDown += l.BytesDown
		m.CPUSeconds += l.CPUSeconds
		m.LatenessUp, m.LatenessDown = worse(m.LatenessUp, l.LatenessUp), worse(m.LatenessDown, l.LatenessDown)
		m.Achieved = mergeAchieved(m.Achieved, l.Achieved)
	}
	return m
}

// mergeAchieved merges what the parts' links did: traffic, rates and losses add up (each
// agent's link is a cable of its own, so peaks add up to a bound of the whole's), the
// delays' mean is weighted by their counts, each quantile, spread and jitter is the larger.
func mergeAchieved(a, b *results.LinkAchieved) *results.LinkAchieved {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	way := func(x, y results.LinkWay) results.LinkWay {
		d := results.Delay{Measured: x.Delay.Measured || y.Delay.Measured, N: x.Delay.N + y.Delay.N,
			Mean: results.MeanOf(x.Delay.Mean, x.Delay.N, y.Delay.Mean, y.Delay.N), SD: max(x.Delay.SD, y.Delay.SD),
			P50: max(x.Delay.P50, y.Delay.P50), P99: max(x.Delay.P99, y.Delay.P99), Max: max(x.Delay.Max, y.Delay.Max)}
		return results.LinkWay{Delay: d, Jitter: max(x.Jitter, y.Jitter), Bytes: x.Bytes + y.Bytes,
			MeanRate: x.MeanRate + y.MeanRate, PeakRate: x.PeakRate + y.PeakRate, Sent: x.Sent + y.Sent, Lost: x.Lost + y.Lost,
			LossChunks: x.LossChunks + y.LossChunks, LossAdded: x.LossAdded + y.LossAdded}
	}
	return &results.LinkAchieved{Window: max(a.Window, b.Window), Up: way(a.Up, b.Up), Down: way(a.Down, b.Down)}
}

// worse merges lateness distributions: counts add, each percentile is the larger.
func worse(a, b *results.Lateness) *results.Lateness {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &results.Lateness{N: a.N + b.N, Mean: results.MeanOf(a.Mean, a.N, b.Mean, b.N),
		P50: max(a.P50, b.P50), P90: max(a.P90, b.P90), P99: max(a.P99, b.P99),
		P999: max(a.P999, b.P999), Max: max(a.Max, b.Max)}
}

// mergeStats merges the parts' server counters before the run (the smallest value of
// each) or after it (the largest), counter by counter.
func mergeStats(rs []*results.Run, after bool) map[string]float64 {
	pick := math.Min
	if after {
		pick = math.Max
	}
	var out map[string]float64
	for _, r := range rs {
		st := r.StatsBefore
		if after {
			st = r.StatsAfter
		}
		if st == nil {
			continue
		}
		if out == nil {
			out = maps.Clone(st)
			continue
		}
		for k, v := range st {
			if old, ok := out[k]; ok {
				out[k] = pick(old, v)
			} else {
				out[k] = v
			}
		}
	}
	return out
}
