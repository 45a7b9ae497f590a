package analysis

import (
	"fmt"
	"math"
	"time"

	"github.com/dblat/dblat/internal/results"
	"github.com/dblat/dblat/internal/spec"
	"github.com/dblat/dblat/internal/stats"
)

// Model names: which form of the latency model a Fit uses.
const (
	// ModelNetwork is X(r) = N/(R·r + s): the network bounds throughput at every RTT measured.
	ModelNetwork = "network"
	// ModelCapacity is X(r) = min(N/(R·r + s), C): the server bounds throughput at C up to
	// Fit.Crossover, the network beyond it.
	ModelCapacity = "network+capacity"
)

// FitTolerance is the largest error, as a fraction of the measured throughput, that a fit
// may make at any measured point and still be said to fit: 15 %, one and a half times the
// 10 % coefficient of variation between repeats that Check accepts (DefaultMaxCV), so that
// a fit is not rejected for the noise of the points it goes through, yet a curve that misses
// the shape (a plateau, a rise) is.
const FitTolerance = 0.15

// Knee fractions: the knees are where throughput has fallen to 90 % and to 50 % of its value
// at the lowest RTT measured ("fallen by 10 % and by 50 %").
const (
	Knee10 = 0.90
	Knee50 = 0.50
)

// Point is one RTT level of a series: what was measured and what the fitted model predicts.
type Point struct {
	// Level is the requested RTT as the study writes it ("500µs").
	Level string `json:"level"`
	// RTT is the added RTT achieved: the mean over the level's finished runs of the link's
	// calibrated median (results.Link.AchievedP50), or the requested RTT for a run without a
	// calibration. Durations in JSON are nanoseconds.
	RTT time.Duration `json:"rtt"`
	// Runs is the number of finished runs behind the point.
	Runs int `json:"runs"`
	// RoundTrips is the measured round trips per completed transaction at this level.
	RoundTrips float64 `json:"round_trips"`
	// Measured is the mean throughput of the runs in completed transactions per second
	// (results.Summary.TPS): the model's unit, whatever the report's metric.
	Measured float64 `json:"measured_tps"`
	// Predicted is the fitted model's throughput (0 when the series does not fit) and ErrPct
	// its error, (predicted − measured)/measured in percent.
	Predicted float64 `json:"predicted_tps,omitempty"`
	ErrPct    float64 `json:"err_pct,omitempty"`
}

// Fit is the latency model fitted to one series: the cells that share every factor level
// except the RTT's.
type Fit struct {
	// Series names the levels the series' cells share ("terminals=8"), or "all runs".
	Series string `json:"series"`
	// N is the concurrency: the terminals, or the pool size when it is smaller (terminals
	// then queue for a connection and only Connections transactions are under way).
	N int `json:"n"`
	// R is the round trips per completed transaction, the mean of the per-type figures
	// weighted by each type's completed transactions over all the series' finished runs.
	// RMeasured is false when no run was metered: R was then fitted along with S.
	R         float64 `json:"round_trips"`
	RMeasured bool    `json:"round_trips_measured"`
	// S is the fitted time per transaction that is not added RTT (server work, client work,
	// the base network, queueing at the server); 0 when the series does not fit.
	S time.Duration `json:"service_time"`
	// Model is ModelNetwork or ModelCapacity when Fits; "" otherwise.
	Model string `json:"model,omitempty"`
	// Capacity is the server's throughput bound C in transactions per second: fitted when
	// Model is ModelCapacity, the measured mean of a series that does not fit because the
	// server bounds it throughout (see Why); 0 when no plateau was seen. Crossover is the RTT
	// at which the network takes over, R·r + s = N/C (ModelCapacity only).
	Capacity  float64       `json:"capacity_tps,omitempty"`
	Crossover time.Duration `json:"crossover,omitempty"`
	// EffectiveR is the round trips per transaction that the time per transaction actually
	// grows by per unit of added RTT: R fitted freely together with s (weighted least
	// squares on N/X, three levels at least; 0 otherwise). Well above R, terminals wait for
	// each other across round trips or something besides the link's delay grows with it;
	// well below, the server was the bottleneck at the low RTTs.
	EffectiveR float64 `json:"effective_round_trips,omitempty"`
	// Fits says whether the model is within FitTolerance of every measured point; MaxErrPct
	// is the largest error in percent of the fitted model (0 when it does not fit). Why
	// explains the verdict in one or two sentences.
	Fits      bool    `json:"fits"`
	MaxErrPct float64 `json:"max_err_pct,omitempty"`
	Why       string  `json:"why"`
	// Points are the series' RTT levels with finished runs, by level.
	Points []Point `json:"points"`
	// Base is the RTT of the first point, the reference of the knees; MaxRTT the RTT of the
	// last, beyond which nothing is claimed.
	Base   time.Duration `json:"base_rtt"`
	MaxRTT time.Duration `json:"max_rtt"`
	// Knee10 and Knee50 are the smallest RTTs at which the measured throughput has fallen to
	// 90 % and 50 % of the first point's, interpolated between the two levels that bracket
	// the crossing; 0 when it is not reached up to MaxRTT (never extrapolated), or when those
	// two levels are too far apart to place it: Knee10Between and Knee50Between then name
	// them (see KneeAt).
	Knee10        time.Duration   `json:"knee10,omitempty"`
	Knee50        time.Duration   `json:"knee50,omitempty"`
	Knee10Between []time.Duration `json:"knee10_between,omitempty"`
	Knee50Between []time.Duration `json:"knee50_between,omitempty"`
	// ModelKnee10 and ModelKnee50 are the same crossings on the fitted curve, which is smooth
	// between levels; 0 when the series does not fit or the crossing lies beyond MaxRTT.
	ModelKnee10 time.Duration `json:"model_knee10,omitempty"`
	ModelKnee50 time.Duration `json:"model_knee50,omitempty"`
	// OpenLoop is set when every finished run of the series was open-loop: its throughput
	// is then bounded by the offered rate, not by the server, wherever the rate was kept,
	// and C is that rate (ResponseAtRate says what the users waited meanwhile).
	OpenLoop bool `json:"open_loop,omitempty"`
}

// FitLatency fits the latency model to every series of runs: the cells grouped by the
// levels of every factor but the RTT, as report.Build groups them (factors empty: inferred
// the same way). It returns nil when RTT is not among the factors: with one RTT there is
// nothing to fit. Only finished runs are used; a level without one is left out.
//
// Method. For each point, T = N/X is the time per transaction of one terminal (Little's law
// with every terminal busy: no think time; with think time it is included in s). The model
// says T(r) = max(R·r + s, N/C). R is measured — at each point the round trips its own runs
// made (a 5 s window draws few Deliveries, 60 round trips each, so the mix moves R from level
// to level), between points the series' R (Fit.R) — so the network-only form has one
// unknown, s, fitted by least squares on T weighted by 1/T² — that is, on the relative
// error of the throughput, so the fast low-RTT points, where s shows, count as much as the
// slow ones, where R·r dominates. If that misses any point by more than FitTolerance, the
// capacity form is fitted: the k lowest points form the plateau T = N/C (C by the same
// weighted mean), the rest the line (s), for every k leaving at least two points on the
// line, keeping the k with the least weighted squared error of the full max() curve. If
// neither fits within FitTolerance the series "does not fit": Why says how (throughput flat
// over the range — the server, not the network, is the bottleneck —, rising with RTT,
// falling faster or more slowly than the measured round trips explain (see EffectiveR), or
// the largest miss) and S, Predicted and the model knees stay zero. Without metered round
// trips R and s are fitted together by weighted least squares on the network-only form
// (three points at least) and the capacity form is not tried.
//
// FitLatency is a pure function; the result is ordered by the series' levels.
func FitLatency(runs []results.Run, factors []string) []Fit {
	g := group(runs, factors)
	if g.factorIndex(results.FactorRTT) < 0 {
		return nil
	}
	var out []Fit
	for _, s := range g.seriesOf(results.FactorRTT) {
		if f, ok := fitSeries(s); ok {
			out = append(out, f)
		}
	}
	return out
}

// AchievedRTT is the RTT the link added in run r, as the run itself measured it: the RTT
// requested plus the mean lateness of the link's releases during the window, toward the
// server and back (results.Link.LatenessUp and LatenessDown: every delayed chunk of the
// run's own traffic, under the run's own load). The mean, because throughput answers to
// it: a terminal's cycle is the sum of its round trips, so N/X = R·(r + mean lateness) + s,
// however the lateness is spread. A run stored before the mean was recorded is placed at
// its median lateness instead; one that recorded no lateness (or had no delay line) at its
// calibration's median (results.Link.AchievedP50, measured just before the run), else at
// the RTT requested. It is the x of every throughput-against-RTT figure, here and in the
// report, with the requested RTT beside it.
func AchievedRTT(r *results.Run) time.Duration {
	l := r.Link
	switch {
	case l == nil:
		return r.Params.RTT
	case lateN(l.LatenessUp)+lateN(l.LatenessDown) > 0:
		return r.Params.RTT + lateAt(l.LatenessUp) + lateAt(l.LatenessDown)
	case l.Samples > 0:
		return l.AchievedP50
	}
	return r.Params.RTT
}

// RTTUncertainty is how far run r's achieved RTT (AchievedRTT) may be off what its
// transactions waited on average, which is what throughput answers to. Placed at the mean
// lateness, it is the standard error of that mean, bounded without the distribution's
// shape: a lateness between a floor and its recorded maximum has at most the variance
// (max − mean)·(mean − floor) (Bhatia–Davis), the floor being the earliest the link
// releases (earliestRelease before its time). Placed at the median (a run stored before the
// mean was recorded) it is the spread p90 − p50, each way; for a run that recorded no
// lateness, the gap between its calibration's median and 99th percentile; 0 without a link.
func RTTUncertainty(r *results.Run) time.Duration {
	l := r.Link
	switch {
	case l == nil:
		return 0
	case lateN(l.LatenessUp)+lateN(l.LatenessDown) > 0:
		spread := func(x *results.Lateness) time.Duration {
			switch {
			case lateN(x) == 0:
				return 0
			case !meanRecorded(x):
				return max(x.P90-x.P50, 0)
			}
			floor := min(x.Mean, 0) - earliestRelease
			v := float64(max(x.Max-x.Mean, 0)) * float64(x.Mean-floor)
			return time.Duration(math.Sqrt(v / float64(x.N)))
		}
		return spread(l.LatenessUp) + spread(l.LatenessDown)
	case l.Samples > 0:
		return max(l.AchievedP99-l.AchievedP50, 0)
	}
	return 0
}

// earliestRelease bounds how early the link releases a chunk: it arms its timers at most
// 250 µs before the release time (package latency's lead) and, when it does not spin, may
// release on that wake-up.
const earliestRelease = 250 * time.Microsecond

// meanRecorded reports whether x carries its mean: runs stored before it was recorded read
// back 0 with a positive p90.
func meanRecorded(x *results.Lateness) bool { return x.Mean != 0 || x.P90 == 0 }

// lateAt is the lateness a run is placed at, one way: the mean, or the median for a run
// stored before the mean was recorded.
func lateAt(x *results.Lateness) time.Duration {
	switch {
	case lateN(x) == 0:
		return 0
	case meanRecorded(x):
		return x.Mean
	}
	return x.P50
}

func lateN(x *results.Lateness) int64 {
	if x == nil {
		return 0
	}
	return x.N
}

// roundTrips returns the round trips per completed transaction of r's transaction types
// weighted by their completed transactions, with that weight; 0, 0 when r was not metered.
func roundTrips(r *results.Run) (rt, weight float64) {
	var sum, w float64
	metered := false
	for _, t := range r.Tx {
		n := float64(t.Committed + t.Rollbacks)
		sum += t.RoundTrips * n
		w += n
		if t.RoundTrips > 0 {
			metered = true
		}
	}
	if !metered || w == 0 {
		return 0, 0
	}
	return sum / w, w
}

// concurrency is the number of transactions a run had under way: terminals, or the pool
// when smaller.
func concurrency(p *results.Params) int {
	if p.Connections > 0 && p.Connections < p.Terminals {
		return p.Connections
	}
	return p.Terminals
}

// fitSeries fits one series; false when it has no finished run.
func fitSeries(s *series) (Fit, bool) {
	f := seriesPoints(s)
	if len(f.Points) == 0 {
		return f, false
	}
	rtts, tps := make([]time.Duration, len(f.Points)), make([]float64, len(f.Points))
	for i, p := range f.Points {
		rtts[i], tps[i] = p.RTT, p.Measured
	}
	f.Knee10, f.Knee10Between = KneeAt(rtts, tps, Knee10)
	f.Knee50, f.Knee50Between = KneeAt(rtts, tps, Knee50)
	if f.Why = unfittable(&f); f.Why != "" {
		return f, true
	}
	pts := make([]xy, len(f.Points))
	for i, p := range f.Points {
		pts[i] = xy{r: p.RTT.Seconds(), t: float64(f.N) / p.Measured, R: p.RoundTrips}
	}
	if len(pts) >= 3 {
		if free := fitNetworkFree(withoutR(pts)); free.R > 0 {
			f.EffectiveR = round(free.R, 3)
		}
	}
	m, ok, why := chooseModel(&f, pts)
	switch {
	case why != "":
		f.Why = why
	case !ok:
		f.Why, f.Capacity = diagnose(f, pts)
		if !f.RMeasured {
			f.R = 0
		}
	default:
		describeFit(&f, m, pts)
	}
	return f, true
}

// seriesPoints averages each RTT level's finished runs of s into a point (throughput,
// achieved RTT, round trips per transaction) and the series' round trips over all of them.
func seriesPoints(s *series) Fit {
	f := Fit{Series: s.name, Points: []Point{}, OpenLoop: true}
	var rtSum, rtW float64
	for _, c := range s.cells {
		if len(c.Finished) == 0 {
			continue
		}
		for _, run := range c.Finished {
			f.OpenLoop = f.OpenLoop && run.Params.OpenLoop()
		}
		if f.N == 0 {
			f.N = concurrency(&c.Finished[0].Params)
		}
		var x, r, prt, pw float64
		for _, run := range c.Finished {
			x += run.Summary.TPS
			r += float64(AchievedRTT(run))
			rt, w := roundTrips(run)
			prt += rt * w
			pw += w
		}
		n := float64(len(c.Finished))
		p := Point{Level: results.FactorValue(c.Finished[0], results.FactorRTT), Runs: len(c.Finished),
			RTT: time.Duration(math.Round(r / n)), Measured: round(x/n, 3)}
		if pw > 0 {
			p.RoundTrips = round(prt/pw, 3)
		}
		rtSum += prt
		rtW += pw
		f.Points = append(f.Points, p)
	}
	if len(f.Points) > 0 {
		f.Base, f.MaxRTT = f.Points[0].RTT, f.Points[len(f.Points)-1].RTT
	}
	if rtW > 0 {
		f.R, f.RMeasured = round(rtSum/rtW, 3), true
	}
	return f
}

// unfittable says why f's points cannot be fitted at all, or "".
func unfittable(f *Fit) string {
	switch {
	case len(f.Points) < 2:
		return "one RTT level with finished runs: nothing to fit"
	case f.N <= 0:
		return "the runs record no terminals"
	}
	for _, p := range f.Points {
		if p.Measured <= 0 {
			return fmt.Sprintf("no throughput measured at RTT %s", p.Level)
		}
	}
	return ""
}

// chooseModel fits the network model with the measured round trips, or the capacity
// model where that misses; without metered round trips it fits R too (three levels at
// least). ok says whether the model is within FitTolerance of every point; why, when set,
// is why no model could be tried.
func chooseModel(f *Fit, pts []xy) (m curve, ok bool, why string) {
	switch {
	case f.RMeasured:
		m = fitNetwork(pts, f.R)
		if ok = m.s > 0 && maxRelErr(pts, m, f.N) <= FitTolerance; ok || len(pts) < 3 {
			return m, ok, ""
		}
		if c, found := fitCapacity(pts, f.R); found && c.s > 0 && maxRelErr(pts, c, f.N) <= FitTolerance {
			return c, true, ""
		}
		return m, false, ""
	case len(pts) >= 3:
		m = fitNetworkFree(pts)
		f.R = round(m.R, 3)
		return m, m.R > 0 && m.s > 0 && maxRelErr(pts, m, f.N) <= FitTolerance, ""
	}
	return m, false, "round trips were not metered and two RTT levels cannot fix both R and s"
}

// describeFit fills f from the model m that fits its points: the service time, the
// capacity and crossover of a capacity model, each point's prediction and error, the
// model's knees and the sentence that says what bounds throughput.
func describeFit(f *Fit, m curve, pts []xy) {
	f.Fits = true
	f.S = durationOf(m.s)
	f.Model = ModelNetwork
	if m.tau > 0 {
		f.Model = ModelCapacity
		f.Capacity = round(float64(f.N)/m.tau, 3)
		f.Crossover = durationOf((m.tau - m.s) / m.R)
	}
	for i := range f.Points {
		p := &f.Points[i]
		p.Predicted = round(m.xAt(pts[i], f.N), 3)
		p.ErrPct = round((p.Predicted-p.Measured)/p.Measured*100, 1)
		f.MaxErrPct = max(f.MaxErrPct, math.Abs(p.ErrPct))
	}
	f.ModelKnee10 = modelKnee(m, *f, Knee10)
	f.ModelKnee50 = modelKnee(m, *f, Knee50)
	rsrc := "measured"
	if !f.RMeasured {
		rsrc = "fitted (round trips not metered)"
	}
	if f.Model == ModelNetwork {
		f.Why = fmt.Sprintf("N/(R·r + s) with R = %.1f round trips (%s) and s = %s is within %.0f %% of every point: the network bounds throughput over the whole range",
			f.R, rsrc, fmtDur(f.S), f.MaxErrPct)
		return
	}
	bound := "the server bounds"
	if f.OpenLoop {
		bound = "the offered rate of an open loop bounds"
	}
	f.Why = fmt.Sprintf("min(N/(R·r + s), C) with R = %.1f round trips (%s), s = %s and C = %.1f tx/s is within %.0f %% of every point: %s throughput up to %s of added RTT, the network beyond",
		f.R, rsrc, fmtDur(f.S), f.Capacity, f.MaxErrPct, bound, fmtDur(f.Crossover))
}

// xy is one point in the fitting space: the added RTT r in seconds, the time per
// transaction of one terminal, t = N/X, in seconds, and the round trips per transaction
// measured at the point (0 when not metered).
type xy struct{ r, t, R float64 }

// curve is a fitted model: T(r) = max(R·r + s, tau); tau = 0 for the network-only form. R
// is the series' round trips, used between the points (knees, crossover); at a point the
// point's own measured round trips are used (see tAt).
type curve struct{ R, s, tau float64 }

// tAt is the curve's time per transaction at point p, with p's own round trips when it has
// them: the mix a short window happens to draw moves R (a Delivery makes 60 round trips, a
// Payment 7), and the model predicts what the point's runs did.
func (c curve) tAt(p xy) float64 {
	R := p.R
	if R <= 0 {
		R = c.R
	}
	return max(R*p.r+c.s, c.tau)
}

// xAt is the curve's throughput at point p for n terminals.
func (c curve) xAt(p xy, n int) float64 { return float64(n) / c.tAt(p) }

// x is the curve's throughput at r for n terminals, with the series' round trips.
func (c curve) x(r float64, n int) float64 { return float64(n) / max(c.R*r+c.s, c.tau) }

// fitNetwork fits s in T = R·r + s by least squares weighted by 1/T², with each point's
// own round trips (the series' R where a point has none): s is the weighted mean of
// T − R·r.
func fitNetwork(pts []xy, R float64) curve {
	rest, w := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		pr := p.R
		if pr <= 0 {
			pr = R
		}
		rest[i], w[i] = p.t-pr*p.r, 1/(p.t*p.t)
	}
	return curve{R: R, s: stats.WeightedMean(rest, w)}
}

// fitNetworkFree fits R and s in T = R·r + s by least squares weighted by 1/T²; the zero
// curve where every point has the same r.
func fitNetworkFree(pts []xy) curve {
	r, t, w := make([]float64, len(pts)), make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		r[i], t[i], w[i] = p.r, p.t, 1/(p.t*p.t)
	}
	s, R, ok := stats.FitLine(r, t, w)
	if !ok {
		return curve{}
	}
	return curve{R: R, s: s}
}

// fitCapacity fits T = max(R·r + s, tau) with R known: for each split of the points (sorted
// by r) into k ≥ 1 plateau points and at least two line points, tau is the weighted mean of
// the plateau's T and s that of the line's T − R·r; the split whose full curve has the
// least weighted squared error wins. Splits whose plateau does not lie above the line at
// the first point (the capacity would not bind anywhere) are skipped; false when none is
// left.
func fitCapacity(pts []xy, R float64) (curve, bool) {
	best, bestErr, found := curve{}, math.Inf(1), false
	for k := 1; k <= len(pts)-2; k++ {
		plateau, w := make([]float64, k), make([]float64, k)
		for i, p := range pts[:k] {
			plateau[i], w[i] = p.t, 1/(p.t*p.t)
		}
		c := fitNetwork(pts[k:], R)
		c.tau = stats.WeightedMean(plateau, w)
		r0 := pts[0].R
		if r0 <= 0 {
			r0 = c.R
		}
		if c.tau <= r0*pts[0].r+c.s {
			continue
		}
		var sse float64
		for _, p := range pts {
			e := (p.t - c.tAt(p)) / p.t
			sse += e * e
		}
		if sse < bestErr {
			best, bestErr, found = c, sse, true
		}
	}
	return best, found
}

// withoutR returns pts without their measured round trips, for a curve whose R was fitted.
func withoutR(pts []xy) []xy {
	out := make([]xy, len(pts))
	for i, p := range pts {
		out[i] = xy{r: p.r, t: p.t}
	}
	return out
}

// maxRelErr is the largest |predicted − measured|/measured throughput of c over pts.
func maxRelErr(pts []xy, c curve, n int) float64 {
	var e float64
	for _, p := range pts {
		meas := float64(n) / p.t
		e = max(e, math.Abs(c.xAt(p, n)-meas)/meas)
	}
	return e
}

// diagnose says why a series does not fit and, when the server bounds it throughout,
// returns the measured plateau as its capacity.
func diagnose(f Fit, pts []xy) (string, float64) {
	first, last := f.Points[0], f.Points[len(f.Points)-1]
	hi := first
	for _, p := range f.Points {
		if p.Measured > hi.Measured {
			hi = p
		}
	}
	if f.RMeasured {
		s0 := pts[0].t - f.R*pts[0].r
		if s0 > 0 {
			// What the network alone would do from the first point on.
			fall := 1 - (float64(f.N)/(f.R*pts[len(pts)-1].r+s0))/first.Measured
			if last.Measured >= (1-FitTolerance)*first.Measured && hi.Measured <= (1+FitTolerance)*first.Measured && fall > FitTolerance {
				var sum float64
				for _, p := range f.Points {
					sum += p.Measured
				}
				c := round(sum/float64(len(f.Points)), 3)
				bound := "the server"
				if f.OpenLoop {
					bound = "the offered rate of an open loop"
				}
				return fmt.Sprintf("throughput stays within %.0f %% of its %s value up to %s (%.1f → %.1f tx/s) where N/(R·r + s) with R = %.1f would fall by %.0f %%: %s, not the network, bounds it over the measured range (about %.1f tx/s)",
					FitTolerance*100, first.Level, last.Level, first.Measured, last.Measured, f.R, fall*100, bound, c), c
			}
		} else {
			return fmt.Sprintf("R·r alone (%.1f round trips × %s) exceeds the time per transaction at %s: the round-trip count or the achieved RTT is wrong",
				f.R, fmtDur(f.Points[0].RTT), first.Level), 0
		}
	}
	if hi.Measured > (1+FitTolerance)*first.Measured {
		return fmt.Sprintf("throughput rises with RTT (%.1f tx/s at %s, %.1f at %s): something other than the network (contention between terminals, the server's scheduling) dominates, and the model does not apply",
			first.Measured, first.Level, hi.Measured, hi.Level), 0
	}
	// With R measured: does the time per transaction grow faster or slower with r than the
	// measured round trips say? An R fitted freely (effective round trips per added RTT)
	// shows it.
	if f.RMeasured && len(pts) >= 3 {
		free := fitNetworkFree(pts)
		if free.R > 0 {
			fit := "it does not fit well either"
			if free.s > 0 && maxRelErr(withoutR(pts), free, f.N) <= FitTolerance {
				fit = fmt.Sprintf("with it the curve is within %.0f %% of every point", FitTolerance*100)
			}
			switch ratio := free.R / f.R; {
			case ratio > 1+FitTolerance:
				return fmt.Sprintf("throughput falls faster with RTT than the measured round trips explain: each transaction loses about %.1f added RTTs (fitted; %s) where it makes %.1f round trips. Likely causes: terminals waiting for each other's locks, held across round trips (contention grows with r: few warehouses, many terminals), or the latency link's CPU competing with the server",
					free.R, fit, f.R), 0
			case ratio < 1-FitTolerance:
				return fmt.Sprintf("throughput falls more slowly with RTT than the measured round trips explain: each transaction loses about %.1f added RTTs (fitted; %s) where it makes %.1f round trips. Likely causes: the server was the bottleneck at the low RTTs, or round trips overlap (pipelining)",
					free.R, fit, f.R), 0
			}
		}
	}
	// The network-only fit's worst point, to say where it misses.
	m := fitNetwork(pts, f.R)
	if !f.RMeasured {
		m = fitNetworkFree(pts)
	}
	worst, we := f.Points[0], -1.0
	for i, p := range f.Points {
		e := (m.xAt(pts[i], f.N) - p.Measured) / p.Measured
		if math.Abs(e) > we {
			worst, we = p, math.Abs(e)
		}
	}
	return fmt.Sprintf("neither N/(R·r + s) nor min(N/(R·r + s), C) comes within %.0f %% of every point (the network-only fit misses by %.0f %% at %s): the data do not follow the model",
		FitTolerance*100, we*100, worst.Level), 0
}

// Knee returns the smallest RTT at which throughput ys (one value per RTT of rtts, sorted by
// RTT) has fallen to frac of its first value (Knee10, Knee50), interpolated between the two
// levels that bracket the crossing; 0 when it does not fall that far within the points
// (never extrapolated), when there are fewer than two points or the first is not positive,
// or when the two levels are too far apart to place it (KneeAt). Any throughput unit will
// do: the knee of NOPM and of TPS differ only as far as the transaction mix does.
func Knee(rtts []time.Duration, ys []float64, frac float64) time.Duration {
	at, _ := KneeAt(rtts, ys, frac)
	return at
}

// KneeTolerance is how far, as a share of the knee, two ways of drawing the throughput curve
// between two levels may place it before the levels count as too far apart: a straight line
// in throughput, and a straight line in time per transaction (N/X, which the latency model
// says grows linearly with the RTT). Between close levels they agree to a few per cent;
// between RTT 0 and 20 ms of a pgbench select-only series the first says 2 ms and the
// second 0.1 ms.
const KneeTolerance = 0.25

// KneeAt is Knee that also says where a crossing it cannot place lies: the two levels that
// bracket it (between), when the interpolations in throughput and in time per transaction
// place it more than KneeTolerance of the knee apart. Otherwise at is the interpolation in
// time per transaction: in a closed loop each terminal's cycle (N/X, Little's law) grows
// by one RTT per round trip while the network bounds throughput and stays put while the
// server does, so a straight line in N/X follows the curve between levels, where one in X
// cuts its convex bend and places the knee late (the quickstart's 2-terminal series: 22 µs
// against the model's 14 µs in throughput, 17 µs in time per transaction).
func KneeAt(rtts []time.Duration, ys []float64, frac float64) (at time.Duration, between []time.Duration) {
	n := min(len(rtts), len(ys))
	if n < 2 || ys[0] <= 0 {
		return 0, nil
	}
	target := frac * ys[0]
	for i := 1; i < n; i++ {
		if ys[i] > target {
			continue
		}
		lo, hi := float64(rtts[i-1]), float64(rtts[i])
		if ys[i-1] == ys[i] {
			return rtts[i], nil
		}
		// In throughput, and in time per transaction (1/X: the model's straight line).
		uX := (ys[i-1] - target) / (ys[i-1] - ys[i])
		uT := uX
		if ys[i] > 0 {
			uT = (1/target - 1/ys[i-1]) / (1/ys[i] - 1/ys[i-1])
		}
		kx, kt := lo+uX*(hi-lo), lo+uT*(hi-lo)
		if ys[i] <= 0 || math.Abs(kx-kt) > KneeTolerance*(kx+kt)/2 {
			return 0, []time.Duration{rtts[i-1], rtts[i]}
		}
		return roundUs(kt), nil
	}
	return 0, nil
}

// Predict returns the fitted model's throughput at an added RTT, in completed transactions
// per second, with the series' round trips R: min(N/(R·r + s), C). It returns 0 when the
// series does not fit: no curve is claimed then.
func (f *Fit) Predict(rtt time.Duration) float64 {
	if !f.Fits || f.N <= 0 {
		return 0
	}
	t := f.R*rtt.Seconds() + f.S.Seconds()
	if f.Capacity > 0 && f.Model == ModelCapacity {
		t = max(t, float64(f.N)/f.Capacity)
	}
	if t <= 0 {
		return 0
	}
	return float64(f.N) / t
}

// modelKnee returns the RTT at which the fitted curve has fallen to frac of its value at
// the first point: N/(R·r + s) = frac·X(r₀), so r = (N/(frac·X(r₀)) − s)/R; 0 when that lies
// beyond the last point (never extrapolated).
func modelKnee(m curve, f Fit, frac float64) time.Duration {
	if m.R <= 0 {
		return 0
	}
	x0 := m.x(f.Base.Seconds(), f.N)
	r := (float64(f.N)/(frac*x0) - m.s) / m.R
	if r < f.Base.Seconds() || r > f.MaxRTT.Seconds() {
		return 0
	}
	return durationOf(r)
}

// durationOf converts seconds to a Duration rounded to the microsecond.
func durationOf(sec float64) time.Duration { return roundUs(sec * float64(time.Second)) }

func roundUs(ns float64) time.Duration {
	return time.Duration(math.Round(ns/1e3)) * time.Microsecond
}

// fmtDur writes d as study files write durations, rounded to the microsecond.
func fmtDur(d time.Duration) string { return spec.FormatDuration(d.Round(time.Microsecond)) }
