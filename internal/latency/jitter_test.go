package latency

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// stats of a sample in ms: mean and quantiles.
type dstats struct{ mean, p10, p50, p90, p99 float64 }

func describe(v []float64) dstats {
	s := slices.Clone(v)
	slices.Sort(s)
	m := 0.0
	for _, x := range s {
		m += x
	}
	q := func(p float64) float64 { return s[int(p*float64(len(s)-1))] }
	return dstats{m / float64(len(s)), q(.1), q(.5), q(.9), q(.99)}
}

func TestQuantileTables(t *testing.T) {
	const ms = float64(time.Millisecond)
	for _, c := range []struct {
		dist           Distribution
		mean, sd, p50  float64 // in units of J around d
		p99            float64
		meanTol, sdTol float64
	}{
		{Uniform, 0, 1 / math.Sqrt(3), 0, 0.98, 0.01, 0.01},
		{Normal, 0, 1, 0, 2.326, 0.01, 0.01},
		// paretonormal: mean 0 and sd sqrt(13)/4 before the +4 clamp, which trims the tail.
		{ParetoNormal, -0.03, 0.86, 2 - 1.5 + 0.26 - 0.5, 3.72, 0.03, 0.05},
	} {
		tab := newQuantiles(10*time.Millisecond, time.Millisecond, c.dist)
		var v []float64
		for i := range 100000 {
			v = append(v, (tab.at((float64(i)+0.5)/100000)-10*ms)/ms)
		}
		st := describe(v)
		sd := 0.0
		for _, x := range v {
			sd += (x - st.mean) * (x - st.mean)
		}
		sd = math.Sqrt(sd / float64(len(v)))
		t.Logf("%v: mean %.3f sd %.3f p50 %.3f p99 %.3f (units of J)", c.dist, st.mean, sd, st.p50, st.p99)
		if math.Abs(st.mean-c.mean) > c.meanTol || math.Abs(sd-c.sd) > c.sdTol || math.Abs(st.p99-c.p99) > 0.05 {
			t.Errorf("%v: mean %.3f sd %.3f p99 %.3f; want %.3f %.3f %.3f", c.dist, st.mean, sd, st.p99, c.mean, c.sd, c.p99)
		}
		// lower and upper invert at.
		for _, u := range []float64{0.001, 0.1, 0.5, 0.9, 0.99} {
			x := tab.at(u)
			if lo, hi := tab.lower(x), tab.upper(x); math.Abs(lo-u) > 1e-9 || math.Abs(hi-u) > 1e-9 {
				t.Errorf("%v: at(%v)=%v, lower %v upper %v", c.dist, u, x, lo, hi)
			}
		}
	}
	// Clamping at zero makes a flat part: lower and upper bracket it.
	tab := newQuantiles(time.Millisecond, 2*time.Millisecond, Uniform) // 25% of draws clamp to 0
	if lo, hi := tab.lower(0), tab.upper(0); lo != 0 || math.Abs(hi-0.25) > 1e-3 {
		t.Errorf("flat part: lower %v upper %v", lo, hi)
	}
}

// simulateChain feeds departures with the given gap function through a jitter chain
// (or through independent draws clamped to the previous release when clamp is set, what
// toxiproxy does) and returns the delivered delays in ms.
func simulateChain(t *testing.T, tab *quantiles, n int, gap func(prevDelay int64) int64, clamp bool) []float64 {
	ch := newJitterChain(tab, 1, 7)
	rng := rand.New(rand.NewPCG(2, 3))
	dep, lastRel, prev := int64(0), int64(math.MinInt64), int64(0)
	out := make([]float64, 0, n)
	for range n {
		dep += gap(prev)
		var d int64
		if clamp {
			d = int64(tab.at(rng.Float64()))
		} else {
			d = ch.next(dep)
		}
		rel := dep + d
		if rel < lastRel {
			if !clamp && lastRel-rel > 1 { // 1 ns: float to int truncation
				t.Fatalf("order broken: release %d before previous %d", rel, lastRel)
			}
			rel = lastRel
		}
		lastRel = rel
		prev = rel - dep
		out = append(out, float64(prev)/1e6)
	}
	return out
}

func TestJitterChainKeepsDistribution(t *testing.T) {
	ms := int64(time.Millisecond)
	rng := rand.New(rand.NewPCG(4, 5))
	other := newQuantiles(5*time.Millisecond, 4*time.Millisecond, Uniform)
	for _, dist := range []Distribution{Uniform, Normal, ParetoNormal} {
		spread := 4 * time.Millisecond
		if dist != Uniform {
			spread = 2 * time.Millisecond
		}
		tab := newQuantiles(5*time.Millisecond, spread, dist)
		var ref []float64
		for i := range 100000 {
			ref = append(ref, tab.at((float64(i)+0.5)/100000)/1e6)
		}
		want := describe(ref)
		for _, sc := range []struct {
			name string
			gap  func(prev int64) int64
			tol  float64 // relative tolerance on mean and median
		}{
			// Closed loop: the next request leaves when the reply to the previous one is in.
			{"ping-pong", func(prev int64) int64 { return prev + int64(other.at(rng.Float64())) + 10000 }, 0.02},
			{"stream every 1ms", func(int64) int64 { return ms }, 0.05},
			{"poisson every 3ms", func(int64) int64 { return int64(rng.ExpFloat64() * 3 * float64(ms)) }, 0.03},
			{"stream every 0.1ms", func(int64) int64 { return ms / 10 }, 0.08},
		} {
			got := describe(simulateChain(t, tab, 200000, sc.gap, false))
			t.Logf("%-12v %-19s mean %.3f p10 %.3f p50 %.3f p90 %.3f p99 %.3f (want %.3f %.3f %.3f %.3f %.3f)",
				dist, sc.name, got.mean, got.p10, got.p50, got.p90, got.p99, want.mean, want.p10, want.p50, want.p90, want.p99)
			if math.Abs(got.mean/want.mean-1) > sc.tol || math.Abs(got.p50/want.p50-1) > sc.tol {
				t.Errorf("%v %s: mean %.3f p50 %.3f, want %.3f %.3f ±%.0f%%", dist, sc.name, got.mean, got.p50, want.mean, want.p50, 100*sc.tol)
			}
		}
	}
	// What clamping independent draws does under a steady stream (toxiproxy's model): the
	// mean grows from 5 to about 6.3 ms. The chain above stays at 5.
	tab := newQuantiles(5*time.Millisecond, 4*time.Millisecond, Uniform)
	if got := describe(simulateChain(t, tab, 200000, func(int64) int64 { return ms }, true)); got.mean < 6 {
		t.Errorf("clamped independent draws: mean %.3f, expected the known inflation to >6 ms", got.mean)
	} else {
		t.Logf("clamped independent draws, stream every 1ms: mean %.3f p50 %.3f", got.mean, got.p50)
	}
}

func TestJitterChainBursts(t *testing.T) {
	// Chunks of one burst (same departure) share one delay: a message split into several
	// reads is not jittered twice (toxiproxy#239).
	tab := newQuantiles(5*time.Millisecond, 4*time.Millisecond, Normal)
	ch := newJitterChain(tab, 9, 9)
	ch.next(0)
	first := ch.next(int64(time.Second))
	for i := range 10 {
		if d := ch.next(int64(time.Second)); d != first {
			t.Fatalf("chunk %d of a burst: delay %d, first %d", i, d, first)
		}
	}
}
