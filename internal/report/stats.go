package report

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the two-sided confidence level of every interval in a report.
const Confidence = 0.95

// Estimate is the mean of one figure over the finished repeats of a cell.
type Estimate struct {
	// N is the number of repeats the mean is taken over.
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	// SD is the sample standard deviation (n−1 in the denominator); 0 when N < 2.
	SD float64 `json:"sd"`
	// CI is the 95 % confidence interval of the mean by Student's t with N−1 degrees of
	// freedom; nil when N < 2, where no interval can be given.
	CI *Interval `json:"ci95,omitempty"`
}

// Interval is a confidence interval: Mean ± Half = [Low, High].
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	Half float64 `json:"half"`
}

// tQuantile returns the two-sided critical value of Student's t for the given confidence
// level and degrees of freedom (e.g. 4.303 for 95 % and df = 2). df must be at least 1.
func tQuantile(confidence float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(1 - (1-confidence)/2)
}

// estimate returns the mean of xs with its Student's t interval; values are rounded to four
// decimals so that reports are byte-for-byte reproducible across platforms (fused
// multiply-add may change the last bits).
func estimate(xs []float64) Estimate { return estimateWith(xs, nil) }

// estimateWith is estimate with the standard deviation bounded below by the runs' counting
// resolutions (results.Resolution, one per run): repeats that agree more closely than
// counting can tell are known to no better than it.
func estimateWith(xs, resolutions []float64) Estimate {
	e := Estimate{N: len(xs)}
	if e.N == 0 {
		return e
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(e.N)
	e.Mean = round(mean, 4)
	if e.N < 2 {
		return e
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(e.N-1))
	if len(resolutions) > 0 {
		var rr float64
		for _, r := range resolutions {
			rr += r * r
		}
		sd = max(sd, math.Sqrt(rr/float64(len(resolutions))))
	}
	half := tQuantile(Confidence, e.N-1) * sd / math.Sqrt(float64(e.N))
	e.SD = round(sd, 4)
	e.CI = &Interval{Low: round(mean-half, 4), High: round(mean+half, 4), Half: round(half, 4)}
	return e
}

// round rounds x to places decimals.
func round(x float64, places int) float64 {
	p := math.Pow10(places)
	return math.Round(x*p) / p
}

// welch returns the 95 % confidence interval of the difference of means b − a by Welch's
// t-test (unequal variances, Welch–Satterthwaite degrees of freedom); nil unless both have
// an interval (two repeats or more). With no spread on either side the interval is the
// difference itself.
func welch(a, b Estimate) *Interval {
	if a.N < 2 || b.N < 2 {
		return nil
	}
	d := b.Mean - a.Mean
	va, vb := a.SD*a.SD/float64(a.N), b.SD*b.SD/float64(b.N)
	se2 := va + vb
	if se2 == 0 {
		return &Interval{Low: round(d, 4), High: round(d, 4)}
	}
	df := se2 * se2 / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	half := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1-(1-Confidence)/2) * math.Sqrt(se2)
	return &Interval{Low: round(d-half, 4), High: round(d+half, 4), Half: round(half, 4)}
}
