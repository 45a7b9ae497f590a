// Package stats holds the statistics that reports, studies and checks share, over
// gonum/stat: means and standard deviations, Student's t intervals of a mean and of a
// difference of two means (Welch), medians, weighted means and weighted least squares of a
// straight line, and the rounding that keeps printed figures reproducible.
package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Summary is the mean of a sample with the half-width of its confidence interval.
type Summary struct {
	// N is the sample's size; Mean its mean and SD its standard deviation (n − 1 in the
	// denominator; 0 when N < 2), or the floor it was given when that is larger.
	N        int
	Mean, SD float64
	// Half is the confidence interval's half-width, t(1 − (1 − confidence)/2, N − 1) ·
	// SD / √N; +Inf for fewer than two values, which have no interval.
	Half float64
}

// Summarize returns the mean of xs with its Student's t interval at confidence (0.95 for
// 95 %). floors, when not empty, bound the standard deviation from below by their root
// mean square: values known to no better than a resolution each (a count's, say) that
// agree more closely than it are not a narrower interval.
func Summarize(xs []float64, confidence float64, floors []float64) Summary {
	s := Summary{N: len(xs), Half: math.Inf(1)}
	s.Mean, s.SD = MeanSD(xs)
	if s.N < 2 {
		return s
	}
	if len(floors) > 0 {
		var ff float64
		for _, f := range floors {
			ff += f * f
		}
		s.SD = max(s.SD, math.Sqrt(ff/float64(len(floors))))
	}
	s.Half = TQuantile(confidence, float64(s.N-1)) * s.SD / math.Sqrt(float64(s.N))
	return s
}

// Relative is the interval's half-width as a share of the mean: 0.1 for ±10 %. It is +Inf
// without an interval, or when the mean is 0 and the values differ.
func (s Summary) Relative() float64 {
	switch {
	case math.IsInf(s.Half, 1):
		return math.Inf(1)
	case s.Half == 0:
		return 0
	case s.Mean == 0:
		return math.Inf(1)
	}
	return s.Half / math.Abs(s.Mean)
}

// MeanSD returns the mean and the sample standard deviation (n − 1 in the denominator; 0
// for fewer than two values) of xs; 0, 0 for none.
func MeanSD(xs []float64) (mean, sd float64) {
	switch len(xs) {
	case 0:
		return 0, 0
	case 1:
		return xs[0], 0
	}
	return stat.MeanStdDev(xs, nil)
}

// TQuantile is the two-sided critical value of Student's t at confidence with df degrees
// of freedom (4.303 for 0.95 and df = 2). df must be positive; it need not be whole
// (Welch–Satterthwaite's is not).
func TQuantile(confidence, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-confidence)/2)
}

// Welch returns the difference of means b − a with the half-width of its confidence
// interval by Welch's t (unequal variances, Welch–Satterthwaite degrees of freedom); ok is
// false unless both have two values or more. With no spread on either side the half-width
// is 0.
func Welch(a, b Summary, confidence float64) (diff, half float64, ok bool) {
	if a.N < 2 || b.N < 2 {
		return 0, 0, false
	}
	diff = b.Mean - a.Mean
	va, vb := a.SD*a.SD/float64(a.N), b.SD*b.SD/float64(b.N)
	se2 := va + vb
	if se2 == 0 {
		return diff, 0, true
	}
	df := se2 * se2 / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	return diff, TQuantile(confidence, df) * math.Sqrt(se2), true
}

// Median is the median of xs, which it leaves as they are: the mean of the middle two for
// an even count (in integer arithmetic for integers); 0 for none.
func Median[T ~int | ~int64 | ~float64](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// WeightedMean is the mean of xs weighted by w (nil for equal weights).
func WeightedMean(xs, w []float64) float64 { return stat.Mean(xs, w) }

// FitLine fits y = intercept + slope·x by least squares weighted by w (nil for equal
// weights); ok is false when the xs do not vary, where no slope can be fitted.
func FitLine(x, y, w []float64) (intercept, slope float64, ok bool) {
	if len(x) < 2 || stat.Variance(x, w) == 0 {
		return 0, 0, false
	}
	intercept, slope = stat.LinearRegression(x, y, w, false)
	return intercept, slope, !math.IsNaN(slope)
}

// Round rounds x to places decimals, so that what is printed or stored is the same on
// every platform (fused multiply-add may change a computation's last bits).
func Round(x float64, places int) float64 {
	p := math.Pow10(places)
	return math.Round(x*p) / p
}
