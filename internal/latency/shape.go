package latency

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// lossDraw decides which transmissions of one direction of one connection are lost (see
// Config.Loss): each is lost with probability p, independently, drawn as the geometric gap
// to the next loss so that a chunk costs one comparison unless a loss falls in it. It is
// used by the one goroutine that stamps the direction's chunks.
type lossDraw struct {
	rng   *rand.Rand
	logq  float64 // log(1−p)
	left  int64   // transmissions that pass before the next loss
	rto   int64   // ns
	stats *lossStats
}

// lossStream is the PCG stream of a connection's loss draws, apart from its jitter's.
const lossStream = 1 << 62

func newLossDraw(p float64, rto time.Duration, seed int64, stream uint64, stats *lossStats) *lossDraw {
	l := &lossDraw{rng: rand.New(rand.NewPCG(uint64(seed), stream|lossStream)), logq: math.Log1p(-p), rto: int64(rto), stats: stats}
	l.left = l.gap()
	return l
}

// gap draws how many transmissions pass before the next lost one.
func (l *lossDraw) gap() int64 {
	g := math.Floor(math.Log(1-l.rng.Float64()) / l.logq) // 1−u is in (0, 1]
	return int64(min(g, math.MaxInt64/2))
}

// take consumes n transmissions and returns how many of them are lost.
func (l *lossDraw) take(n int64) (lost int64) {
	for l.left < n {
		n -= l.left + 1
		lost++
		l.left = l.gap()
	}
	l.left -= n
	return lost
}

// delay returns how much later than its due time a chunk of n bytes leaves: 0 unless one
// of its segments (MSS bytes each) is lost. Its lost segments are sent again when the
// retransmission timeout expires, together, as TCP does after a timeout with selective
// acknowledgements, and each retransmission is lost again with the same probability, the
// timeout doubling every time (RFC 6298 5.5), up to RTOMax: one loss costs one RTO, a lost
// retransmission three, and so on. Later chunks wait behind it (sched.due keeps TCP order).
func (l *lossDraw) delay(n int) int64 {
	segs := max(int64(n+MSS-1)/MSS, 1)
	lost := l.take(segs)
	if lost == 0 {
		l.stats.sent.Add(segs)
		return 0
	}
	sent, lostAll, extra, rto := segs, int64(0), int64(0), l.rto
	for lost > 0 {
		lostAll += lost
		extra += rto
		rto = min(2*rto, int64(RTOMax))
		sent += lost
		lost = l.take(lost)
	}
	l.stats.sent.Add(sent)
	l.stats.lost.Add(lostAll)
	l.stats.chunks.Add(1)
	l.stats.added.Add(extra)
	return extra
}

// lossStats counts what a link's loss did in one direction, over all its connections.
type lossStats struct {
	// sent counts transmissions (segments and their retransmissions), lost those lost,
	// chunks the chunks that waited for a retransmission, added the time they waited, ns.
	sent, lost, chunks, added atomic.Int64
}

// LossCounts is what a link's loss did in one direction (Stats.LossUp, LossDown).
type LossCounts struct {
	// Sent counts the segments the direction carried (MSS bytes of each chunk, at least
	// one per chunk) and their retransmissions; Lost those lost, retransmissions included.
	Sent int64 `json:"sent"`
	Lost int64 `json:"lost"`
	// Chunks counts the chunks that waited for a retransmission and Added the time they
	// waited in all (one RTO per loss, more for lost retransmissions).
	Chunks int64         `json:"chunks"`
	Added  time.Duration `json:"added_ns"`
}

func (s *lossStats) counts() LossCounts {
	if s == nil {
		return LossCounts{}
	}
	return LossCounts{Sent: s.sent.Load(), Lost: s.lost.Load(), Chunks: s.chunks.Load(), Added: time.Duration(s.added.Load())}
}

// Sub returns the counts since an earlier snapshot b.
func (c LossCounts) Sub(b LossCounts) LossCounts {
	return LossCounts{Sent: c.Sent - b.Sent, Lost: c.Lost - b.Lost, Chunks: c.Chunks - b.Chunks, Added: c.Added - b.Added}
}

// delayStats records the one-way delay a shaped direction (jitter, bandwidth or loss)
// applies to each chunk: from the chunk's stamp (its arrival, or the end of the sender's
// wait for room) to its release time, so bandwidth, jitter, loss and TCP order included,
// the link's own lateness (Stats.LatenessUp, LatenessDown) not. A direction with a delay
// alone applies it to every chunk and records nothing (DelaySummary reads the delay then).
// Safe for concurrent use.
type delayStats struct {
	h     histogram
	sumSq atomic.Uint64 // float64 bits: Σ delay² in µs²
}

func (s *delayStats) record(v int64) {
	s.h.record(v)
	us := float64(v) / 1e3
	for {
		old := s.sumSq.Load()
		if s.sumSq.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+us*us)) {
			return
		}
	}
}

// delaySnap is a delayStats at one moment.
type delaySnap struct {
	h     histSnap
	sumSq float64
}

func (s *delayStats) snapshot() delaySnap {
	return delaySnap{h: s.h.snapshot(), sumSq: math.Float64frombits(s.sumSq.Load())}
}

// DelaySummary describes the one-way delays a direction applied (Stats.DelayUp,
// DelayDown): their distribution (quantiles as Summary's: at most 12.5 % high) and their
// standard deviation, exact.
type DelaySummary struct {
	Summary
	SD time.Duration `json:"sd_ns"`
}

// since summarises what s recorded after b.
func (s *delayStats) since(b delaySnap) DelaySummary {
	sum := s.h.since(b.h)
	return withSD(sum, math.Float64frombits(s.sumSq.Load())-b.sumSq)
}

func (s *delayStats) summary() DelaySummary {
	return withSD(s.h.summary(), math.Float64frombits(s.sumSq.Load()))
}

// withSD adds the standard deviation of sum's values, whose squares add up to sq µs².
func withSD(sum Summary, sq float64) DelaySummary {
	d := DelaySummary{Summary: sum}
	if sum.N > 1 {
		mean := float64(sum.Mean) / 1e3
		v := (sq - float64(sum.N)*mean*mean) / float64(sum.N-1)
		d.SD = time.Duration(math.Sqrt(max(v, 0)) * 1e3)
	}
	return d
}
