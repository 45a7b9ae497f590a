package runner

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/latency"
)

// Histogram bounds: 1 µs to 10 minutes with 3 significant digits (0.1 % resolution). Ten
// minutes covers a 100-round-trip transaction at the 200 ms RTTs of seed 000 many times over;
// longer values are clamped to the maximum and counted.
const (
	histMinUs   = 1
	histMaxUs   = 10 * 60 * 1_000_000
	histSigFigs = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMinUs, histMaxUs, histSigFigs) }

func recordUs(h *hdrhistogram.Histogram, d time.Duration) {
	us := d.Microseconds()
	if us < histMinUs {
		us = histMinUs
	}
	if us > histMaxUs {
		us = histMaxUs
	}
	_ = h.RecordValue(us) // cannot fail: clamped to the histogram's range
}

// typeStats are the counters and histograms of one transaction type in one shard.
type typeStats struct {
	// Interval figures, reset at every tick; cover warm-up and measurement alike.
	ivHist   *hdrhistogram.Histogram
	ivResp   *hdrhistogram.Histogram
	ivCommit int64
	ivErrors int64
	// Window figures: only transactions that completed inside the measurement window.
	hist      *hdrhistogram.Histogram // service time
	wait      *hdrhistogram.Histogram // connection-pool wait
	resp      *hdrhistogram.Histogram // response time
	lag       *hdrhistogram.Histogram // schedule lag
	committed int64
	rollbacks int64
	errors    [4]int64 // by engine.ErrorClass
	retries   int64    // tries beyond the first
	retried   int64    // transactions with more than one try
	late      int64    // response time above the latency limit
	rt        roundTrips
}

// roundTrips accumulates the wire cost of the committed transactions of one type.
type roundTrips struct {
	n                                   int64 // transactions with wire counts
	trips, bytesUp, bytesDown, writesUp int64
	tripsHist                           *hdrhistogram.Histogram
}

// shard is one lock-protected slice of the recorder. Terminal i always records into shard
// i % len(shards), so with more shards than cores terminals rarely contend, while memory
// stays bounded by the shard count rather than the terminal count (one histogram of this
// range is ~170 KB).
type shard struct {
	mu    sync.Mutex
	types []typeStats
}

type recorder struct {
	shards []shard
	stalls stallClock
}

// stallClock measures, per sample interval, the longest time during which no transaction
// ended at all: every terminal waiting at once, which is how a host's disk stall, a frozen
// virtual machine or a server's pause shows in a closed loop. It costs two atomic
// operations per transaction, outside the shards' locks.
type stallClock struct {
	// last is the latest end of a transaction (Unix nanoseconds), or the run's start;
	// longest the longest gap between two ends that closed in the current interval.
	last, longest atomic.Int64
}

// ended records a transaction that ended at t (Unix nanoseconds). Ends recorded out of
// order (terminals race to record) never move last backwards.
func (c *stallClock) ended(t int64) {
	for {
		prev := c.last.Load()
		if t <= prev {
			return
		}
		if c.last.CompareAndSwap(prev, t) {
			c.stretch(t - prev)
			return
		}
	}
}

// stretch makes gap the interval's longest if it is longer.
func (c *stallClock) stretch(gap int64) {
	for {
		cur := c.longest.Load()
		if gap <= cur || c.longest.CompareAndSwap(cur, gap) {
			return
		}
	}
}

// take returns the interval's longest stall at now, counting a stall still going on as far
// as it has reached, and starts the next interval.
func (c *stallClock) take(now int64) time.Duration {
	return time.Duration(max(c.longest.Swap(0), now-c.last.Load()))
}

func newRecorder(nShards, nTypes int, start time.Time) *recorder {
	r := &recorder{shards: make([]shard, nShards)}
	r.stalls.last.Store(start.UnixNano())
	for i := range r.shards {
		r.shards[i].types = make([]typeStats, nTypes)
		for j := range r.shards[i].types {
			ts := &r.shards[i].types[j]
			ts.ivHist, ts.ivResp, ts.hist, ts.wait, ts.resp, ts.lag = newHist(), newHist(), newHist(), newHist(), newHist(), newHist()
			ts.rt.tripsHist = hdrhistogram.New(1, 1_000_000, 3)
		}
	}
	return r
}

// outcome is how one transaction ended.
type outcome struct {
	txType int
	// wait is the connection-pool wait, svc the service time, resp the response time and
	// lag the schedule lag (TxSummary).
	wait, svc, resp, lag time.Duration
	inWindow             bool
	rollback             bool
	class                engine.ErrorClass
	failed               bool
	retries              int             // tries beyond the first
	late                 bool            // resp above the latency limit
	wire                 *latency.Counts // nil when the connection is not metered
	// end is when the transaction ended; zero reads as the time it is recorded.
	end time.Time
}

func (r *recorder) record(terminal int, o outcome) {
	end := o.end
	if end.IsZero() {
		end = time.Now()
	}
	r.stalls.ended(end.UnixNano())
	s := &r.shards[terminal%len(r.shards)]
	s.mu.Lock()
	ts := &s.types[o.txType]
	if o.inWindow && o.retries > 0 {
		ts.retries += int64(o.retries)
		ts.retried++
	}
	if o.failed {
		ts.ivErrors++
		if o.inWindow {
			ts.errors[o.class]++
		}
		s.mu.Unlock()
		return
	}
	recordUs(ts.ivHist, o.svc)
	recordUs(ts.ivResp, o.resp)
	ts.ivCommit++
	if o.inWindow {
		recordUs(ts.hist, o.svc)
		recordUs(ts.wait, o.wait)
		recordUs(ts.resp, o.resp)
		recordUs(ts.lag, o.lag)
		if o.late {
			ts.late++
		}
		if o.rollback {
			ts.rollbacks++
		} else {
			ts.committed++
		}
		if o.wire != nil {
			ts.rt.n++
			ts.rt.trips += o.wire.RoundTrips
			ts.rt.bytesUp += o.wire.BytesUp
			ts.rt.bytesDown += o.wire.BytesDown
			ts.rt.writesUp += o.wire.ChunksUp
			_ = ts.rt.tripsHist.RecordValue(max(o.wire.RoundTrips, 1))
		}
	}
	s.mu.Unlock()
}

// interval is one tick's merged figures per type, and its longest stall.
type interval struct {
	hist    []*hdrhistogram.Histogram // service time
	resp    []*hdrhistogram.Histogram // response time
	commits []int64
	errors  []int64
	stall   time.Duration
}

// takeInterval merges and resets every shard's interval figures; now ends the interval.
func (r *recorder) takeInterval(nTypes int, now time.Time) interval {
	iv := interval{hist: make([]*hdrhistogram.Histogram, nTypes), resp: make([]*hdrhistogram.Histogram, nTypes),
		commits: make([]int64, nTypes), errors: make([]int64, nTypes), stall: r.stalls.take(now.UnixNano())}
	for t := range nTypes {
		iv.hist[t], iv.resp[t] = newHist(), newHist()
	}
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for t := range s.types {
			ts := &s.types[t]
			iv.hist[t].Merge(ts.ivHist)
			ts.ivHist.Reset()
			iv.resp[t].Merge(ts.ivResp)
			ts.ivResp.Reset()
			iv.commits[t] += ts.ivCommit
			iv.errors[t] += ts.ivErrors
			ts.ivCommit, ts.ivErrors = 0, 0
		}
		s.mu.Unlock()
	}
	return iv
}

// window merges every shard's measurement-window figures into one typeStats per type.
func (r *recorder) window(nTypes int) []typeStats {
	out := make([]typeStats, nTypes)
	for t := range out {
		out[t].hist, out[t].wait, out[t].resp, out[t].lag = newHist(), newHist(), newHist(), newHist()
		out[t].rt.tripsHist = hdrhistogram.New(1, 1_000_000, 3)
	}
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		for t := range s.types {
			src, dst := &s.types[t], &out[t]
			dst.hist.Merge(src.hist)
			dst.wait.Merge(src.wait)
			dst.resp.Merge(src.resp)
			dst.lag.Merge(src.lag)
			dst.retries += src.retries
			dst.retried += src.retried
			dst.late += src.late
			dst.committed += src.committed
			dst.rollbacks += src.rollbacks
			for c := range dst.errors {
				dst.errors[c] += src.errors[c]
			}
			dst.rt.n += src.rt.n
			dst.rt.trips += src.rt.trips
			dst.rt.bytesUp += src.rt.bytesUp
			dst.rt.bytesDown += src.rt.bytesDown
			dst.rt.writesUp += src.rt.writesUp
			dst.rt.tripsHist.Merge(src.rt.tripsHist)
		}
		s.mu.Unlock()
	}
	return out
}
