package report

import "github.com/dblat/dblat/internal/stats"

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

// estimate returns the mean of xs with its Student's t interval; values are rounded to four
// decimals so that reports are byte-for-byte reproducible across platforms.
func estimate(xs []float64) Estimate { return estimateWith(xs, nil) }

// estimateWith is estimate with the standard deviation bounded below by the runs' counting
// resolutions (results.Resolution, one per run): repeats that agree more closely than
// counting can tell are known to no better than it.
func estimateWith(xs, resolutions []float64) Estimate {
	s := stats.Summarize(xs, Confidence, resolutions)
	e := Estimate{N: s.N, Mean: round(s.Mean, 4)}
	if s.N < 2 {
		return e
	}
	e.SD = round(s.SD, 4)
	e.CI = &Interval{Low: round(s.Mean-s.Half, 4), High: round(s.Mean+s.Half, 4), Half: round(s.Half, 4)}
	return e
}

// round rounds x to places decimals (stats.Round).
func round(x float64, places int) float64 { return stats.Round(x, places) }

// welch returns the 95 % confidence interval of the difference of means b − a by Welch's
// t-test (stats.Welch); nil unless both have an interval (two repeats or more). With no
// spread on either side the interval is the difference itself.
func welch(a, b Estimate) *Interval {
	d, half, ok := stats.Welch(stats.Summary{N: a.N, Mean: a.Mean, SD: a.SD}, stats.Summary{N: b.N, Mean: b.Mean, SD: b.SD}, Confidence)
	if !ok {
		return nil
	}
	return &Interval{Low: round(d-half, 4), High: round(d+half, 4), Half: round(half, 4)}
}
