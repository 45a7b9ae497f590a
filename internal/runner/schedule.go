package runner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/workload"
)

// schedule is an open-loop run's arrivals: fixed before the run by its rate, its arrival
// process and its seed, and independent of how fast the server answers. Terminals take
// arrivals in order (take); the schedule holds no queue, only the index of the next
// arrival, so its memory stays flat however far the terminals fall behind. Safe for
// concurrent use.
type schedule struct {
	start   time.Time
	gap     float64 // seconds between arrivals (constant), or their mean (poisson)
	poisson bool
	seed    int64

	mu sync.Mutex
	g  arrivals
}

// arrivals generates one schedule's arrival offsets in order.
type arrivals struct {
	gap     float64
	poisson bool
	r       *rand.Rand
	k       int64   // index of the next arrival (constant)
	next    float64 // offset of the next arrival in seconds (poisson)
}

func newArrivals(gap float64, poisson bool, seed int64) arrivals {
	a := arrivals{gap: gap, poisson: poisson}
	if poisson {
		a.r = workload.NewRand(seed, "arrivals")
		a.next = a.r.ExpFloat64() * gap
	}
	return a
}

// advance returns the next arrival's offset from the schedule's start.
func (a *arrivals) advance() time.Duration {
	var off float64
	if a.poisson {
		off = a.next
		a.next += a.r.ExpFloat64() * a.gap
	} else {
		// k·gap rather than a running sum: no rounding error accumulates over a long run.
		off = float64(a.k) * a.gap
		a.k++
	}
	return time.Duration(math.Round(off * 1e9))
}

// newSchedule returns the schedule of rate arrivals per second from start, spaced by
// arrival (spec.ArrivalConstant, "" too, or spec.ArrivalPoisson, seeded by seed).
func newSchedule(start time.Time, rate float64, arrival string, seed int64) (*schedule, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return nil, fmt.Errorf("rate must be a positive number of transactions per second, got %v", rate)
	}
	s := &schedule{start: start, gap: 1 / rate, seed: seed}
	switch arrival {
	case "", spec.ArrivalConstant:
	case spec.ArrivalPoisson:
		s.poisson = true
	default:
		return nil, fmt.Errorf("arrival %q: use %s or %s", arrival, spec.ArrivalConstant, spec.ArrivalPoisson)
	}
	s.g = newArrivals(s.gap, s.poisson, seed)
	return s, nil
}

// take hands out the next arrival: its intended start.
func (s *schedule) take() time.Time {
	s.mu.Lock()
	off := s.g.advance()
	s.mu.Unlock()
	return s.start.Add(off)
}

// count returns how many arrivals of the schedule are due in [from, to), by replaying it
// from its start with the same seed.
func (s *schedule) count(from, to time.Time) int64 {
	lo, hi := from.Sub(s.start), to.Sub(s.start)
	if hi <= lo {
		return 0
	}
	if !s.poisson {
		// Arrival k is due at round(k·gap); count the k with lo ≤ due < hi.
		first := func(d time.Duration) int64 {
			k := int64(math.Ceil(d.Seconds() / s.gap))
			for k > 0 && time.Duration(math.Round(float64(k-1)*s.gap*1e9)) >= d {
				k--
			}
			for time.Duration(math.Round(float64(k)*s.gap*1e9)) < d {
				k++
			}
			return max(k, 0)
		}
		return first(hi) - first(lo)
	}
	g := newArrivals(s.gap, true, s.seed)
	var n int64
	for {
		off := g.advance()
		if off >= hi {
			return n
		}
		if off >= lo {
			n++
		}
	}
}
