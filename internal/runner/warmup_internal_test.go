package runner

import (
	"math"
	"testing"
)

// firstSteady returns the first n at which x[:n] is steady by MSER's rule, 0 if none.
func firstSteady(x []float64) int {
	for n := 1; n <= len(x); n++ {
		if steadyAt(x[:n]) {
			return n
		}
	}
	return 0
}

func TestMSERTruncationPoint(t *testing.T) {
	// MSER(d) for x = 20, 50, 80, 100, 103, 98, 101: the transient ends after the third
	// second, d* = 3, which is in the first half from n = 7 on; the verdict is confirmed
	// at n = 8 at the earliest (two near-equal last seconds can make MSER pick them alone,
	// which delays it: MSER's known instability at the end of a series).
	x := []float64{20, 50, 80, 100, 103, 98, 101, 99, 102, 100, 98, 101, 103, 99, 100}
	if d := mser(x[:7]); d != 3 {
		t.Errorf("d* = %d, want 3", d)
	}
	if n := firstSteady(x); n < 8 || n > 12 {
		t.Errorf("steady after %d s, want 8 to 12 (twice the transient, one, and the confirmation)", n)
	}
	// Steady from the start: the minimum number of seconds.
	if n := firstSteady([]float64{412, 398, 405, 391, 409, 401, 396, 407}); n != minAutoSeconds+1 {
		t.Errorf("a flat series is steady after %d s, want %d", n, minAutoSeconds+1)
	}
	// A step in the last second is not taken for noise: 100 a second for three seconds,
	// then 900; the new level must hold for longer than the old one lasted.
	step := []float64{100, 100, 100, 900, 904, 897, 902, 899, 901, 903, 898, 906, 900, 895, 901}
	if n := firstSteady(step); n < 8 {
		t.Errorf("step after 3 s: steady after %d s, want 8 or more", n)
	}
	if n := firstSteady(step); n == 0 {
		t.Errorf("step after 3 s: never steady in %d s", len(step))
	}
	// A ramp that goes on is never steady.
	var ramp []float64
	for i := range 60 {
		ramp = append(ramp, float64(10*i))
	}
	if n := firstSteady(ramp); n != 0 {
		t.Errorf("a ramp was called steady after %d s", n)
	}
	// Poisson-like noise around a level settles within a few seconds of the minimum.
	noisy := []float64{400, 430, 385, 410, 395, 420, 405, 390, 415, 400}
	if n := firstSteady(noisy); n == 0 || n > 8 {
		t.Errorf("noise around a level: steady after %d s", n)
	}
	// A run that completes nothing has nothing to wait for.
	if !steadyAt([]float64{0, 0, 0, 0, 0}) || mser([]float64{1}) != -1 {
		t.Error("degenerate series")
	}
	// MSER(d) by its definition, against the suffix-sum computation.
	def := func(x []float64, d int) float64 {
		m := 0.0
		for _, v := range x[d:] {
			m += v
		}
		m /= float64(len(x) - d)
		ss := 0.0
		for _, v := range x[d:] {
			ss += (v - m) * (v - m)
		}
		return ss / math.Pow(float64(len(x)-d), 2)
	}
	for _, s := range [][]float64{x, noisy, ramp[:9]} {
		best, bestD := math.Inf(1), -1
		for d := 0; d <= len(s)-2; d++ {
			if v := def(s, d); v < best-1e-12 {
				best, bestD = v, d
			}
		}
		if got := mser(s); got != bestD {
			t.Errorf("mser(%v) = %d, by definition %d", s, got, bestD)
		}
	}
}
