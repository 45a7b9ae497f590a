package latency

import (
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"
	"time"
)

// Summary describes a distribution of durations. The zero value is an empty distribution.
// Durations marshal to JSON as nanoseconds.
type Summary struct {
	N    int           `json:"n"`
	Min  time.Duration `json:"min_ns"`
	Mean time.Duration `json:"mean_ns"`
	P50  time.Duration `json:"p50_ns"`
	P90  time.Duration `json:"p90_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
	Max  time.Duration `json:"max_ns"`
}

// String renders the summary in microseconds ("p50 12.3µs p99 45.6µs ...").
func (s Summary) String() string {
	if s.N == 0 {
		return "no samples"
	}
	us := func(d time.Duration) string { return fmt.Sprintf("%.1fµs", float64(d)/1e3) }
	return fmt.Sprintf("n=%d min %s p50 %s p90 %s p99 %s p99.9 %s max %s mean %s",
		s.N, us(s.Min), us(s.P50), us(s.P90), us(s.P99), us(s.P999), us(s.Max), us(s.Mean))
}

// summarize computes exact order statistics of samples (which it sorts in place). The
// q-quantile is the sample at rank ceil(q·n) (nearest-rank definition).
func summarize(samples []time.Duration) Summary {
	n := len(samples)
	if n == 0 {
		return Summary{}
	}
	slices.Sort(samples)
	var sum time.Duration
	for _, v := range samples {
		sum += v
	}
	rank := func(q float64) time.Duration {
		i := int(q*float64(n)+0.999999) - 1
		return samples[min(max(i, 0), n-1)]
	}
	return Summary{N: n, Min: samples[0], Mean: sum / time.Duration(n),
		P50: rank(0.5), P90: rank(0.9), P99: rank(0.99), P999: rank(0.999), Max: samples[n-1]}
}

// histogram is a lock-free log-linear histogram of non-negative nanosecond values: one bucket
// below 1.024 µs, then 8 buckets per power of two (12.5 % resolution) up to 2^41 ns (36 min).
// Safe for concurrent use; record never blocks or allocates.
type histogram struct {
	counts   [histBuckets]atomic.Uint64
	sum, max atomic.Int64
}

const (
	histMinExp  = 10 // values below 2^10 ns share bucket 0
	histSub     = 3  // 2^3 = 8 sub-buckets per power of two
	histBuckets = 1 + (41-histMinExp)<<histSub
)

func histIndex(v int64) int {
	if v < 1<<histMinExp {
		return 0
	}
	e := bits.Len64(uint64(v)) - 1
	i := 1 + (e-histMinExp)<<histSub + int(uint64(v)>>(e-histSub)&(1<<histSub-1))
	return min(i, histBuckets-1)
}

// histUpper is the exclusive upper bound of bucket i.
func histUpper(i int) int64 {
	if i == 0 {
		return 1 << histMinExp
	}
	e := (i-1)>>histSub + histMinExp
	sub := int64((i-1)&(1<<histSub-1)) + 1
	return 1<<e + sub<<(e-histSub)
}

// record adds v. A negative value (a release that left early) counts in the sum as it is,
// so the mean is exact, and in the buckets and the maximum as 0.
func (h *histogram) record(v int64) {
	h.sum.Add(v)
	v = max(v, 0)
	h.counts[histIndex(v)].Add(1)
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			return
		}
	}
}

// histSnap is a histogram's counts at one moment, to measure what it recorded since.
type histSnap struct {
	counts [histBuckets]uint64
	sum    int64
}

func (h *histogram) snapshot() histSnap {
	var s histSnap
	for i := range s.counts {
		s.counts[i] = h.counts[i].Load()
	}
	s.sum = h.sum.Load()
	return s
}

// since summarises what h recorded after s was taken. Max is then the upper bound of the
// highest bucket that grew (the exact maximum is not kept per interval).
func (h *histogram) since(s histSnap) Summary {
	cur := h.snapshot()
	var top int64 = -1
	for i := range cur.counts {
		cur.counts[i] -= s.counts[i]
		if cur.counts[i] > 0 {
			top = histUpper(i)
		}
	}
	return summaryOf(&cur.counts, cur.sum-s.sum, top)
}

// summary returns approximate order statistics: each quantile is reported as the upper
// bound of its bucket (so at most 12.5 % high), Max and Mean exactly.
func (h *histogram) summary() Summary {
	s := h.snapshot()
	return summaryOf(&s.counts, s.sum, h.max.Load())
}

// summaryOf summarises bucket counts c whose values add up to sum and whose largest is
// maxV (a bound where it is not known exactly).
func summaryOf(c *[histBuckets]uint64, sum, maxNS int64) Summary {
	var n uint64
	for i := range c {
		n += c[i]
	}
	if n == 0 {
		return Summary{}
	}
	maxV := time.Duration(maxNS)
	q := func(p float64) time.Duration {
		want := uint64(p*float64(n) + 0.999999)
		var acc uint64
		for i, k := range c {
			acc += k
			if acc >= max(want, 1) {
				return min(time.Duration(histUpper(i)), maxV)
			}
		}
		return maxV
	}
	minV := time.Duration(0)
	for i, k := range c {
		if k > 0 {
			if i > 0 {
				minV = time.Duration(histUpper(i - 1))
			}
			break
		}
	}
	return Summary{N: int(n), Min: minV, Mean: time.Duration(sum / int64(n)),
		P50: q(0.5), P90: q(0.9), P99: q(0.99), P999: q(0.999), Max: maxV}
}
