package runner

// An automatic warm-up (spec.Drive.WarmupAuto) ends when throughput has settled, judged by
// MSER, the Marginal Standard Error Rule of White (1997: "An effective truncation heuristic
// for bias reduction in simulation output", Simulation 69(6)), in the batched form that
// White, Cobb & Spratt (2000) call MSER-5 and Franklin & White (2008: "Stationarity tests
// and MSER-5", Winter Simulation Conference) analyse: MSER applied to batch means rather
// than to raw observations. Here the batches are the run's per-second samples: each is the
// number of transactions completed in one second, the mean of that second's completions.
//
// For a series x₁ … xₙ, MSER(d) is the squared standard error of the mean of what is left
// after truncating the first d observations:
//
//	MSER(d) = Σ_{i>d} (xᵢ − x̄_d)² / (n − d)²
//
// and the truncation point d* minimizes it: it trades the bias of the start (which raises
// the spread of the rest) against the fewer observations left. MSER's truncation point is
// only trusted when it lies in the first half of the series (White, Cobb & Spratt; Franklin &
// White): otherwise the series is too short to tell a transient from the steady state. The
// warm-up therefore ends at a second n at which d* < n/2: the series has then been steady
// for longer than its transient lasted. A ramp that goes on puts d* near the end and keeps
// the warm-up going, up to its ceiling.
//
// One safeguard is dblat's own: the verdict must hold at two consecutive seconds (n−1 and
// n). MSER judges a change in the very last observation as noise (a step up from 100 to
// 900 transactions a second in the fourth second gives d* = 0); one more second shows it
// as the start of a new level, and d* moves past it.
//
// The price of MSER's sensitivity to late changes is its instability at the end of a
// series: two near-equal last seconds can make it truncate everything before them, which
// delays the verdict. On independent noise around a level (any spread: the rule is
// scale-free) the warm-up ends after 6 s at the median, 12 s at the 90th percentile and
// 20 s at the 99th (2000 simulated series); the ceiling bounds it.

// minAutoSeconds is the fewest per-second samples MSER judges: with n observations the
// truncation points searched are 0 … n−2 (two are left to measure a spread), and d* < n/2
// can first tell a transient apart at n = 4 (d* = 2, the last two seconds alone, is then
// "not yet"). With the verdict confirmed a second later, the shortest automatic warm-up is
// 5 s.
const minAutoSeconds = 4

// mser returns the truncation point d* of x by MSER: the d in [0, len(x)−2] that minimizes
// MSER(d), the smallest on a tie. It returns −1 for fewer than two observations.
func mser(x []float64) int {
	n := len(x)
	if n < 2 {
		return -1
	}
	// Suffix sums make each MSER(d) O(1): Σ(x−m)² = Σx² − (Σx)²/k.
	sum, sq := 0.0, 0.0
	best, bestD := 0.0, -1
	stats := make([]float64, n-1)
	for i := n - 1; i >= 0; i-- {
		sum += x[i]
		sq += x[i] * x[i]
		if i <= n-2 {
			k := float64(n - i)
			ss := sq - sum*sum/k
			if ss < 0 {
				ss = 0 // rounding
			}
			stats[i] = ss / (k * k)
		}
	}
	for d, v := range stats {
		if bestD < 0 || v < best {
			best, bestD = v, d
		}
	}
	return bestD
}

// steadyAt reports whether per-second throughput x (from the start of the warm-up) has
// settled: MSER's truncation point lies in the first half of x, and of x without its last
// second, each of at least minAutoSeconds samples.
func steadyAt(x []float64) bool {
	return len(x) > minAutoSeconds && truncated(x) && truncated(x[:len(x)-1])
}

// truncated reports whether MSER's truncation point of x lies in its first half.
func truncated(x []float64) bool {
	d := mser(x)
	return d >= 0 && 2*d < len(x)
}
