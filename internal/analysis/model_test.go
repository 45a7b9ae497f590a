package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/results"
)

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v", what, got, want, tol)
	}
}

// TestFitNetworkRecovers: network-bound series with known R and s, noise ±2 % over five
// repeats: s is recovered within 2 %, every point within 1 %, and the knees where they
// should be.
func TestFitNetworkRecovers(t *testing.T) {
	rtts := []time.Duration{0, 500 * us, ms, 2 * ms, 5 * ms, 10 * ms}
	runs := study(rtts, []int{8, 16}, func(n int, r time.Duration) float64 { return modelX(n, r, 0) })
	fits := FitLatency(shuffled(runs), factorsRT)
	if len(fits) != 2 {
		t.Fatalf("%d fits, want one per terminals level", len(fits))
	}
	for i, f := range fits {
		n := []int{8, 16}[i]
		if f.Series != "terminals="+[]string{"8", "16"}[i] || f.N != n {
			t.Errorf("fit %d: series %q N %d", i, f.Series, f.N)
		}
		if !f.Fits || f.Model != ModelNetwork {
			t.Fatalf("%s: fits %v model %q: %s", f.Series, f.Fits, f.Model, f.Why)
		}
		within(t, f.Series+" R", f.R, tR, 1e-9)
		within(t, f.Series+" s (ms)", f.S.Seconds()*1e3, tS.Seconds()*1e3, 0.02*tS.Seconds()*1e3)
		if f.MaxErrPct > 1 || f.Capacity != 0 || len(f.Points) != len(rtts) {
			t.Errorf("%s: max error %v%%, capacity %v, %d points", f.Series, f.MaxErrPct, f.Capacity, len(f.Points))
		}
		// Knees on the fitted curve: r = (N/(f·X0) − s)/R with X0 = N/s gives s(1/f − 1)/R,
		// independent of N: 27.8µs for −10 %, 250µs for −50 %.
		within(t, f.Series+" model knee10 (µs)", float64(f.ModelKnee10/us), 5.0/20*(1/0.9-1)*1000, 2)
		within(t, f.Series+" model knee50 (µs)", float64(f.ModelKnee50/us), 250, 6)
		// Both crossings lie between 0 (X0) and 500µs (X0/3), too far apart to place them:
		// a straight line in X puts −10 % at 75µs, one in N/X at 28µs (the model's).
		if f.Knee10 != 0 || f.Knee50 != 0 || !slices.Equal(f.Knee10Between, []time.Duration{0, 500 * us}) ||
			!slices.Equal(f.Knee50Between, []time.Duration{0, 500 * us}) {
			t.Errorf("%s: measured knees %v %v between %v %v, want both only between 0 and 500µs", f.Series,
				f.Knee10, f.Knee50, f.Knee10Between, f.Knee50Between)
		}
		if !strings.Contains(f.Why, "network bounds throughput") {
			t.Errorf("why: %s", f.Why)
		}
	}
}

// TestFitCapacity: a server that saturates at C = 2000 tx/s below 0.55 ms of added RTT
// (32 terminals): the capacity form is chosen, C and s recovered, crossover reported.
func TestFitCapacity(t *testing.T) {
	rtts := []time.Duration{0, 250 * us, 500 * us, ms, 2 * ms, 5 * ms, 10 * ms}
	runs := study(rtts, []int{32}, func(n int, r time.Duration) float64 { return modelX(n, r, 2000) })
	fits := FitLatency(runs, factorsRT)
	if len(fits) != 1 {
		t.Fatalf("%d fits", len(fits))
	}
	f := fits[0]
	if !f.Fits || f.Model != ModelCapacity {
		t.Fatalf("fits %v model %q: %s", f.Fits, f.Model, f.Why)
	}
	within(t, "capacity", f.Capacity, 2000, 40)
	within(t, "s (ms)", f.S.Seconds()*1e3, 5, 0.1)
	// R·r + s = N/C: (32/2000 − 0.005)/20 = 550µs.
	within(t, "crossover (µs)", float64(f.Crossover/us), 550, 15)
	if f.MaxErrPct > 2.5 {
		t.Errorf("max error %v%%", f.MaxErrPct)
	}
	if !strings.Contains(f.Why, "server bounds throughput up to") {
		t.Errorf("why: %s", f.Why)
	}
	// The plateau puts the −10 % knee past the crossover, on the network's curve:
	// 32/(20r + 0.005) = 1800 → r = 639µs; measured between 500µs (2000) and 1ms (1280).
	within(t, "model knee10 (µs)", float64(f.ModelKnee10/us), 639, 15)
	if f.Knee10 <= 500*us || f.Knee10 >= ms {
		t.Errorf("knee10 %v, want between 500µs and 1ms", f.Knee10)
	}
}

// TestFitServerBound: throughput flat over 0–3 ms where the network model says it must
// fall: "does not fit", no forced number, the plateau reported as the capacity.
func TestFitServerBound(t *testing.T) {
	rtts := []time.Duration{0, 500 * us, ms, 2 * ms, 3 * ms}
	runs := study(rtts, []int{8}, func(int, time.Duration) float64 { return 1000 })
	f := FitLatency(runs, factorsRT)[0]
	if f.Fits || f.Model != "" || f.S != 0 {
		t.Fatalf("fits %v model %q s %v: %s", f.Fits, f.Model, f.S, f.Why)
	}
	for _, p := range f.Points {
		if p.Predicted != 0 || p.ErrPct != 0 {
			t.Errorf("point %s has a prediction %v", p.Level, p.Predicted)
		}
	}
	within(t, "capacity", f.Capacity, 1000, 1)
	if !strings.Contains(f.Why, "the server, not the network") {
		t.Errorf("why: %s", f.Why)
	}
	if f.Knee10 != 0 || f.Knee50 != 0 || f.ModelKnee10 != 0 {
		t.Errorf("knees %v %v %v on a flat series", f.Knee10, f.Knee50, f.ModelKnee10)
	}
}

// TestFitRising: throughput that rises with RTT (seed 000, 50 terminals: "the network
// latency helps") is said not to follow the model.
func TestFitRising(t *testing.T) {
	rtts := []time.Duration{0, ms, 2 * ms, 3 * ms}
	runs := study(rtts, []int{50}, func(_ int, r time.Duration) float64 { return 1000 + 200*r.Seconds()*1e3 })
	f := FitLatency(runs, factorsRT)[0]
	if f.Fits || !strings.Contains(f.Why, "rises with RTT") {
		t.Errorf("fits %v: %s", f.Fits, f.Why)
	}
}

// TestFitContention: time per transaction growing by 2R·r (terminals waiting for each
// other's locks across round trips) is diagnosed as falling faster than the round trips
// explain, with the effective round trips fitted.
func TestFitContention(t *testing.T) {
	rtts := []time.Duration{0, 500 * us, ms, 3 * ms, 10 * ms}
	runs := study(rtts, []int{8}, func(n int, r time.Duration) float64 {
		return float64(n) / (2*tR*r.Seconds() + tS.Seconds())
	})
	f := FitLatency(runs, factorsRT)[0]
	if f.Fits || !strings.Contains(f.Why, "falls faster with RTT than the measured round trips explain") ||
		!strings.Contains(f.Why, "about 40.0 added RTTs") || !strings.Contains(f.Why, "within 15 % of every point") {
		t.Errorf("fits %v: %s", f.Fits, f.Why)
	}
}

// TestFitKneeNotReached: the range ends before throughput halves: Knee50 and ModelKnee50
// are 0 (never extrapolated), Knee10 is interpolated.
func TestFitKneeNotReached(t *testing.T) {
	rtts := []time.Duration{0, 100 * us, 200 * us}
	runs := study(rtts, []int{8}, func(n int, r time.Duration) float64 { return modelX(n, r, 0) })
	f := FitLatency(runs, factorsRT)[0]
	if !f.Fits {
		t.Fatalf("does not fit: %s", f.Why)
	}
	if f.Knee50 != 0 || f.ModelKnee50 != 0 {
		t.Errorf("knee50 %v, model %v: want 0 (not reached up to 200µs)", f.Knee50, f.ModelKnee50)
	}
	// X: 1600 at 0, 8/0.007 = 1142.9 at 100µs. A straight line in X would reach 1440 at
	// 100·160/457.1 = 35µs; the line in time per transaction follows the model's curve and
	// finds its knee.
	within(t, "knee10 (µs)", float64(f.Knee10/us), 27.8, 1)
	within(t, "model knee10 (µs)", float64(f.ModelKnee10/us), 27.8, 1)
	if f.MaxRTT != 200*us || f.Base != 0 {
		t.Errorf("range %v–%v", f.Base, f.MaxRTT)
	}
}

// TestFitAchievedRTT: the model runs on the RTT the link achieved, not the one asked for.
func TestFitAchievedRTT(t *testing.T) {
	rtts := []time.Duration{0, ms, 2 * ms, 5 * ms}
	runs := study(rtts, []int{8}, func(n int, r time.Duration) float64 {
		if r > 0 {
			r += 100 * us // the link adds 100µs more than asked
		}
		return modelX(n, r, 0)
	})
	for i := range runs {
		if runs[i].Params.RTT > 0 {
			runs[i].Link.AchievedP50 = runs[i].Params.RTT + 100*us
		}
	}
	f := FitLatency(runs, factorsRT)[0]
	if !f.Fits || f.Points[1].RTT != 1100*us || f.Points[1].Level != "1ms" {
		t.Fatalf("fits %v, point %+v: %s", f.Fits, f.Points[1], f.Why)
	}
	within(t, "s (ms)", f.S.Seconds()*1e3, 5, 0.1)
}

// TestFitUnmeteredFitsR: without metered round trips R is fitted along with s.
func TestFitUnmeteredFitsR(t *testing.T) {
	rtts := []time.Duration{0, ms, 2 * ms, 5 * ms}
	runs := study(rtts, []int{8}, func(n int, r time.Duration) float64 { return modelX(n, r, 0) })
	for i := range runs {
		for j := range runs[i].Tx {
			runs[i].Tx[j].RoundTrips = 0
		}
	}
	f := FitLatency(runs, factorsRT)[0]
	if !f.Fits || f.RMeasured {
		t.Fatalf("fits %v measured %v: %s", f.Fits, f.RMeasured, f.Why)
	}
	within(t, "R", f.R, tR, 0.6)
	within(t, "s (ms)", f.S.Seconds()*1e3, 5, 0.2)
	if !strings.Contains(f.Why, "fitted (round trips not metered)") {
		t.Errorf("why: %s", f.Why)
	}
}

// TestFitEdges: no RTT factor → nil; one level → a fit that says so; unfinished runs are
// ignored; with a pool smaller than the terminals N is the pool.
func TestFitEdges(t *testing.T) {
	runs := study([]time.Duration{ms}, []int{8}, func(n int, r time.Duration) float64 { return modelX(n, r, 0) })
	if fits := FitLatency(runs, []string{results.FactorTerminals}); fits != nil {
		t.Errorf("no rtt factor: %+v", fits)
	}
	f := FitLatency(runs, factorsRT)[0]
	if f.Fits || !strings.Contains(f.Why, "one RTT level") {
		t.Errorf("one level: fits %v: %s", f.Fits, f.Why)
	}

	runs = study([]time.Duration{0, ms, 2 * ms}, []int{16}, func(_ int, r time.Duration) float64 { return modelX(4, r, 0) })
	for i := range runs {
		runs[i].Params.Connections = 4
	}
	bad := cleanRun(999, 2*ms, 16, 5)
	bad.Status = results.StatusFailed
	bad.Params.Connections = 4
	runs = append(runs, bad)
	f = FitLatency(runs, factorsRT)[0]
	if !f.Fits || f.N != 4 || f.Points[2].Runs != 5 {
		t.Errorf("pool of 4: fits %v N %d runs %d: %s", f.Fits, f.N, f.Points[2].Runs, f.Why)
	}
}

// TestFitSeriesByOtherFactors: series are the combinations of the non-RTT factors, ordered
// by their levels.
func TestFitSeriesByOtherFactors(t *testing.T) {
	var runs []results.Run
	id := int64(0)
	for _, mode := range []string{"Super", "Classic"} {
		for _, r := range []time.Duration{0, ms, 2 * ms} {
			id++
			run := cleanRun(id, r, 8, modelX(8, r, 0))
			run.Params.Options["set.ServerMode"] = mode
			runs = append(runs, run)
		}
	}
	fits := FitLatency(runs, []string{"set.ServerMode", results.FactorRTT})
	if len(fits) != 2 || fits[0].Series != "set.ServerMode=Classic" || fits[1].Series != "set.ServerMode=Super" {
		t.Errorf("series %+v", fits)
	}
}

// TestKnee: interpolation in time per transaction between the two levels that bracket the
// crossing, the first level as reference, nothing extrapolated, degenerate input answered
// with 0.
func TestKnee(t *testing.T) {
	rtts := []time.Duration{0, ms, 10 * ms, 100 * ms}
	ys := []float64{3000, 2400, 750, 120} // keeps 80 %, 25 %, 4 %
	// 90 % between 0 (100 %) and 1 ms (80 %): a line in 1/X says 444 µs (one in X, 500).
	if got := Knee(rtts, ys, Knee10); got != 444*us {
		t.Errorf("knee10 %v, want 444µs (1/2700 is 4/9 of the way from 1/3000 to 1/2400)", got)
	}
	// 50 % between 1 ms (80 %) and 10 ms (25 %): a line in X says 5.9 ms, one in 1/X
	// 3.5 ms; the levels are too far apart to place it.
	if got, between := KneeAt(rtts, ys, Knee50); got != 0 || !slices.Equal(between, []time.Duration{ms, 10 * ms}) {
		t.Errorf("knee50 %v between %v, want only between 1 ms and 10 ms", got, between)
	}
	if got := Knee(rtts, ys, 0.01); got != 0 {
		t.Errorf("1 %% is not reached up to 100 ms: got %v", got)
	}
	for _, tc := range []struct {
		rtts []time.Duration
		ys   []float64
	}{{rtts[:1], ys[:1]}, {rtts, []float64{0, 1, 1, 1}}, {nil, nil}} {
		if got := Knee(tc.rtts, tc.ys, Knee10); got != 0 {
			t.Errorf("Knee(%v, %v) = %v, want 0", tc.rtts, tc.ys, got)
		}
	}
	// A flat stretch that reaches the target exactly returns the level where it does.
	if got := Knee([]time.Duration{0, ms, 2 * ms}, []float64{100, 90, 90}, Knee10); got != ms {
		t.Errorf("knee at an exact level: %v", got)
	}
}

// TestPredict: the fitted curve at its points agrees with the fit's own predictions
// (within the difference between the series' R and each point's), is 0 for a series that
// does not fit, and is capped at the capacity of a capacity fit.
func TestPredict(t *testing.T) {
	rtts := []time.Duration{0, 250 * us, 500 * us, ms, 2 * ms, 5 * ms, 10 * ms}
	for _, capacity := range []float64{0, 2000} {
		runs := study(rtts, []int{32}, func(n int, r time.Duration) float64 { return modelX(n, r, capacity) })
		f := FitLatency(runs, factorsRT)[0]
		if !f.Fits {
			t.Fatalf("capacity %v: does not fit: %s", capacity, f.Why)
		}
		for _, p := range f.Points {
			within(t, "predict at "+p.Level, f.Predict(p.RTT), p.Predicted, 0.01*p.Predicted)
		}
		if capacity > 0 && f.Predict(0) > f.Capacity*(1+1e-9) {
			t.Errorf("predict(0) %v above the capacity %v", f.Predict(0), f.Capacity)
		}
		f.Fits = false
		if got := f.Predict(ms); got != 0 {
			t.Errorf("a series that does not fit predicts %v", got)
		}
	}
}

// TestAchievedRTT: the mean in-run lateness where the run recorded it, the median for runs
// stored before the mean was, else the calibrated median, else the request; and how
// uncertain each is.
func TestAchievedRTT(t *testing.T) {
	r := results.Run{Params: results.Params{RTT: ms}}
	if got := AchievedRTT(&r); got != ms {
		t.Errorf("no link: %v", got)
	}
	r.Link = &results.Link{RTT: ms, AchievedP50: 1070 * us}
	if got := AchievedRTT(&r); got != ms {
		t.Errorf("link without calibration samples: %v", got)
	}
	r.Link.Samples = 200
	if got := AchievedRTT(&r); got != 1070*us {
		t.Errorf("calibrated: %v", got)
	}
	if got := RTTUncertainty(&r); got != 0 {
		t.Errorf("calibration with no spread recorded: uncertain by %v", got)
	}
	// In-run lateness wins, at its mean: a seed 000 run at 1 ms on a saturated machine,
	// 1 µs late at the median each way and 33 and 25 µs on average.
	r.Link.LatenessUp = &results.Lateness{N: 20000, Mean: 33 * us, P50: us, P90: 98 * us, Max: 3 * ms}
	r.Link.LatenessDown = &results.Lateness{N: 20000, Mean: 25 * us, P50: us, P90: 90 * us, Max: 2 * ms}
	if got := AchievedRTT(&r); got != 1058*us {
		t.Errorf("in-run lateness: %v, want 1.058ms", got)
	}
	// √((3000 − 33)·(33 + 250)/20000) + √((2000 − 25)·(25 + 250)/20000) = 6.5 + 5.2 µs.
	if got := RTTUncertainty(&r); got < 11*us || got > 12*us {
		t.Errorf("uncertainty of the mean %v, want 11.7µs", got)
	}
	// Stored before the mean was recorded: at the median, give or take p90 − p50.
	r.Link.LatenessUp.Mean, r.Link.LatenessDown.Mean = 0, 0
	if got, u := AchievedRTT(&r), RTTUncertainty(&r); got != 1002*us || u != 186*us {
		t.Errorf("old run: %v ± %v, want 1.002ms ± 186µs", got, u)
	}
}
