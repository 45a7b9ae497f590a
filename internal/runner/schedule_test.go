package runner

import (
	"math"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/spec"
)

// TestScheduleCountsWhatItHandsOut checks that count, which replays the schedule, agrees
// with the arrivals take handed out, for both processes and for windows that start and end
// between arrivals.
func TestScheduleCountsWhatItHandsOut(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, arrival := range spec.Arrivals {
		for _, rate := range []float64{3, 1000, 333.3} {
			s, err := newSchedule(start, rate, arrival, 7)
			if err != nil {
				t.Fatal(err)
			}
			var dues []time.Time
			for {
				d := s.take()
				if d.Sub(start) > 3*time.Second {
					break
				}
				dues = append(dues, d)
			}
			for _, w := range [][2]time.Duration{{0, time.Second}, {250 * time.Millisecond, 2750 * time.Millisecond}, {time.Second, time.Second}} {
				from, to := start.Add(w[0]), start.Add(w[1])
				var want int64
				for _, d := range dues {
					if !d.Before(from) && d.Before(to) {
						want++
					}
				}
				if got := s.count(from, to); got != want {
					t.Errorf("%s at %g/s, window %v: count %d, take handed out %d", arrival, rate, w, got, want)
				}
			}
		}
	}
}

// TestScheduleIsFixedByItsSeed checks the two processes' spacing: constant arrivals exactly
// 1/rate apart, Poisson arrivals with exponential gaps of mean 1/rate whose sequence the
// seed fixes.
func TestScheduleIsFixedByItsSeed(t *testing.T) {
	start := time.Unix(0, 0)
	c, _ := newSchedule(start, 4000, spec.ArrivalConstant, 1)
	for k := range 10 {
		if got, want := c.take().Sub(start), time.Duration(k)*250*time.Microsecond; got != want {
			t.Fatalf("constant arrival %d at %v, want %v", k, got, want)
		}
	}
	a, _ := newSchedule(start, 1000, spec.ArrivalPoisson, 5)
	b, _ := newSchedule(start, 1000, spec.ArrivalPoisson, 5)
	other, _ := newSchedule(start, 1000, spec.ArrivalPoisson, 6)
	const n = 20000
	var last time.Time
	var sum, sumSq float64
	same := 0
	for range n {
		x, y, z := a.take(), b.take(), other.take()
		if !x.Equal(y) {
			t.Fatal("two schedules of one seed differ")
		}
		if x.Equal(z) {
			same++
		}
		gap := x.Sub(last).Seconds()
		if last.IsZero() {
			gap = x.Sub(start).Seconds()
		}
		last = x
		sum += gap
		sumSq += gap * gap
	}
	if same > n/100 {
		t.Errorf("seeds 5 and 6 share %d of %d arrivals", same, n)
	}
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	// An exponential distribution's standard deviation equals its mean; the mean of 20,000
	// gaps is within 3 % of 1 ms with near certainty (its standard error is 0.7 %).
	if math.Abs(mean-1e-3) > 3e-5 || math.Abs(sd-mean) > 0.05*mean {
		t.Errorf("Poisson gaps: mean %.4g s, sd %.4g s; want both 1 ms", mean, sd)
	}
}

func TestScheduleRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		rate    float64
		arrival string
	}{{0, ""}, {-1, ""}, {math.Inf(1), ""}, {math.NaN(), ""}, {10, "uniform"}} {
		if _, err := newSchedule(time.Now(), c.rate, c.arrival, 1); err == nil {
			t.Errorf("rate %v arrival %q accepted", c.rate, c.arrival)
		}
	}
}
