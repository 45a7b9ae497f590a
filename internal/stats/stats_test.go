package stats

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestTQuantile checks the critical values against a printed table of Student's t
// (two-sided 95 %).
func TestTQuantile(t *testing.T) {
	for df, want := range map[float64]float64{1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 9: 2.262, 29: 2.045, 1000: 1.962} {
		if got := TQuantile(0.95, df); !near(got, want, 0.0005) {
			t.Errorf("t(0.975, %v) = %.4f, want %.3f", df, got, want)
		}
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{10, 12, 14}, 0.95, nil)
	// Mean 12, SD 2, half 4.303 · 2 / √3 = 4.968.
	if s.N != 3 || s.Mean != 12 || !near(s.SD, 2, 1e-12) || !near(s.Half, 4.968, 0.001) {
		t.Errorf("Summarize = %+v, want N 3, mean 12, SD 2, half 4.968", s)
	}
	if !near(s.Relative(), 4.968/12, 1e-4) {
		t.Errorf("Relative = %v, want %v", s.Relative(), 4.968/12)
	}
	// Values that agree more closely than their resolutions are known to no better.
	f := Summarize([]float64{100, 100}, 0.95, []float64{3, 4})
	if want := math.Sqrt((9 + 16) / 2.0); !near(f.SD, want, 1e-12) {
		t.Errorf("floored SD = %v, want %v", f.SD, want)
	}
	one := Summarize([]float64{7}, 0.95, nil)
	if one.Mean != 7 || one.SD != 0 || !math.IsInf(one.Half, 1) || !math.IsInf(one.Relative(), 1) {
		t.Errorf("one value: %+v, want mean 7, SD 0 and no interval", one)
	}
	if none := Summarize(nil, 0.95, nil); none.N != 0 || none.Mean != 0 || !math.IsInf(none.Half, 1) {
		t.Errorf("no values: %+v", none)
	}
	if same := Summarize([]float64{5, 5, 5}, 0.95, nil); same.Half != 0 || same.Relative() != 0 {
		t.Errorf("equal values: %+v, want a half-width of 0", same)
	}
}

func TestWelch(t *testing.T) {
	a := Summarize([]float64{10, 11, 12, 13}, 0.95, nil)
	b := Summarize([]float64{20, 24, 28}, 0.95, nil)
	diff, half, ok := Welch(a, b, 0.95)
	// va = 1.6667/4, vb = 16/3; se² = 5.75; df = 5.75² / (0.4167²/3 + 5.3333²/2) = 2.315.
	se2 := a.SD*a.SD/4 + b.SD*b.SD/3
	df := se2 * se2 / (math.Pow(a.SD*a.SD/4, 2)/3 + math.Pow(b.SD*b.SD/3, 2)/2)
	if !ok || diff != 12.5 || !near(df, 2.315, 0.001) || !near(half, TQuantile(0.95, df)*math.Sqrt(se2), 1e-9) {
		t.Errorf("Welch = %v ± %v (%v), want 12.5 ± t(%.3f)·√%.3f", diff, half, ok, df, se2)
	}
	if _, _, ok := Welch(a, Summarize([]float64{1}, 0.95, nil), 0.95); ok {
		t.Error("Welch with one value on a side gave an interval")
	}
	d, h, ok := Welch(Summarize([]float64{3, 3}, 0.95, nil), Summarize([]float64{5, 5}, 0.95, nil), 0.95)
	if !ok || d != 2 || h != 0 {
		t.Errorf("Welch without spread = %v ± %v, want 2 ± 0", d, h)
	}
}

func TestMedian(t *testing.T) {
	xs := []float64{5, 1, 3, 2}
	if got := Median(xs); got != 2.5 {
		t.Errorf("Median(%v) = %v, want 2.5", xs, got)
	}
	if xs[0] != 5 {
		t.Errorf("Median sorted its input: %v", xs)
	}
	if got := Median([]int64{9, 1, 4}); got != 4 {
		t.Errorf("Median of int64 = %v, want 4", got)
	}
	if got := Median([]float64(nil)); got != 0 {
		t.Errorf("Median(nil) = %v, want 0", got)
	}
}

func TestFitLine(t *testing.T) {
	x := []float64{0, 1, 2, 5}
	y := make([]float64, len(x))
	w := make([]float64, len(x))
	for i := range x {
		y[i] = 3 + 0.5*x[i]
		w[i] = 1 / (y[i] * y[i])
	}
	a, b, ok := FitLine(x, y, w)
	if !ok || !near(a, 3, 1e-12) || !near(b, 0.5, 1e-12) {
		t.Errorf("FitLine = %v + %v·x (%v), want 3 + 0.5·x", a, b, ok)
	}
	// Weights pull the line toward the points they favour.
	yy := []float64{0, 1, 2, 10}
	_, heavy, _ := FitLine(x, yy, []float64{1, 1, 1, 100})
	_, light, _ := FitLine(x, yy, []float64{100, 100, 100, 1})
	if heavy <= light {
		t.Errorf("slope with the outlier weighted up %v, down %v: weights ignored", heavy, light)
	}
	if _, _, ok := FitLine([]float64{2, 2, 2}, []float64{1, 2, 3}, nil); ok {
		t.Error("FitLine fitted a slope over xs that do not vary")
	}
	if m := WeightedMean([]float64{1, 3}, []float64{3, 1}); m != 1.5 {
		t.Errorf("WeightedMean = %v, want 1.5", m)
	}
}

func TestRound(t *testing.T) {
	if got := Round(2.34567, 2); got != 2.35 {
		t.Errorf("Round = %v, want 2.35", got)
	}
}
